// HTTP client for the cart API.
import { formatPrice } from "./utils/format.js";

const DEFAULT_TIMEOUT_MS = 5000;
const MAX_RETRIES = 3;

export class ApiClient {
  constructor(baseUrl, token) {
    this.baseUrl = baseUrl.replace(/\/$/, "");
    this.token = token;
    this.timeout = DEFAULT_TIMEOUT_MS;
  }

  async request(method, path, body) {
    let lastError;
    for (let attempt = 0; attempt <= MAX_RETRIES; attempt++) {
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), this.timeout);
      try {
        const response = await fetch(`${this.baseUrl}${path}`, {
          method,
          headers: {
            "Content-Type": "application/json",
            Authorization: `Bearer ${this.token}`,
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: controller.signal,
        });
        if (response.status >= 500) {
          lastError = new Error(`server error ${response.status}`);
          continue;
        }
        return await response.json();
      } catch (err) {
        lastError = err;
      } finally {
        clearTimeout(timer);
      }
    }
    throw lastError;
  }

  async getCart() {
    return this.request("GET", "/cart");
  }

  async addItem(sku, quantity = 1) {
    return this.request("POST", "/cart/items", { sku, quantity });
  }
}

export function describeTotal(cart) {
  return `Total: ${formatPrice(cart.total, cart.currency)}`;
}
