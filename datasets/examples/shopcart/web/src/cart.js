// Cart view state for the browser.
export const EMPTY_CART = Object.freeze({ items: [], total: 0, currency: "EUR" });

export function cartReducer(state = EMPTY_CART, action) {
  switch (action.type) {
    case "cart/loaded":
      return { ...action.payload };
    case "cart/itemAdded": {
      const items = [...state.items, action.payload];
      return { ...state, items, total: state.total + action.payload.subtotal };
    }
    case "cart/cleared":
      return EMPTY_CART;
    default:
      return state;
  }
}

export const selectItemCount = (state) =>
  state.items.reduce((count, item) => count + item.quantity, 0);
