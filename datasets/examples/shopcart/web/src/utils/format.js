// Formatting helpers shared by the views.
const formatters = new Map();

export function formatPrice(amount, currency = "EUR", locale = "de-DE") {
  const key = `${locale}|${currency}`;
  if (!formatters.has(key)) {
    formatters.set(key, new Intl.NumberFormat(locale, { style: "currency", currency }));
  }
  return formatters.get(key).format(amount);
}

export function pluralize(count, singular, plural = `${singular}s`) {
  return count === 1 ? singular : plural;
}
