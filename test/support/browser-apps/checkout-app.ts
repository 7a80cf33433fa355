/**
 * A three-step shop checkout: cart → shipping → payment → confirmation. The payment form's expiry
 * field takes MM/YY and rejects MM/YYYY ("Invalid expiry format. Use MM/YY."), as real card forms
 * do; each placed order is kept so tests can check what was really bought.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { body, cookies, esc, page, redirect, send } from "./html.js";

/** An order the shop received. */
export interface Order {
  id: string;
  name: string;
  address: string;
  country: string;
  card: string;
  expiry: string;
  items: string[];
}

interface Cart {
  items: string[];
  shipping?: { name: string; address: string; country: string };
}

/** The checkout's state and its request handler (for paths under `/shop`). */
export function checkoutApp() {
  const carts = new Map<string, Cart>();
  const orders: Order[] = [];
  let next = 1;
  const cartOf = (req: IncomingMessage) => carts.get(cookies(req).cart ?? "");

  async function handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
    if (path === "/shop" && req.method === "GET") {
      const id = `c${next++}`;
      carts.set(id, { items: ["Blue mug", "Tea sampler", "Linen towel"] });
      const list = carts
        .get(id)!
        .items.map((item) => `<li>${item}</li>`)
        .join("");
      send(
        res,
        page(
          "Cart",
          `<main><h1>Your cart</h1><ul>${list}</ul><form method="post" action="/shop/cart"><button>Checkout</button></form></main>`,
        ),
        200,
        { "set-cookie": `cart=${id}; Path=/; HttpOnly` },
      );
      return true;
    }
    if (path === "/shop/cart" && req.method === "POST") {
      redirect(res, "/shop/shipping");
      return true;
    }
    const cart = cartOf(req);
    if (!cart) return false;
    if (path === "/shop/shipping" && req.method === "GET") {
      send(
        res,
        page(
          "Shipping",
          `<main><h1>Shipping</h1><form method="post" action="/shop/shipping">
        <label for="name">Full name</label><input id="name" name="name" required>
        <label for="address">Address</label><input id="address" name="address" required>
        <label for="country">Country</label><select id="country" name="country"><option value="">Choose…</option><option value="fr">France</option><option value="de">Germany</option><option value="it">Italy</option></select>
        <button>Continue to payment</button></form></main>`,
        ),
      );
      return true;
    }
    if (path === "/shop/shipping" && req.method === "POST") {
      const form = await body(req);
      cart.shipping = {
        name: form.name ?? "",
        address: form.address ?? "",
        country: form.country ?? "",
      };
      redirect(res, "/shop/payment");
      return true;
    }
    if (path === "/shop/payment" && req.method === "GET") {
      send(res, paymentPage(""));
      return true;
    }
    if (path === "/shop/payment" && req.method === "POST") {
      const form = await body(req);
      const expiry = form.expiry ?? "";
      if (!/^(0[1-9]|1[0-2])\/\d{2}$/.test(expiry)) {
        send(res, paymentPage(`Invalid expiry format. Use MM/YY.`, form.card ?? "", expiry), 422);
        return true;
      }
      const order: Order = {
        id: `A-${1000 + orders.length + 1}`,
        ...cart.shipping!,
        card: (form.card ?? "").slice(-4),
        expiry,
        items: cart.items,
      };
      orders.push(order);
      redirect(res, `/shop/done?order=${order.id}`);
      return true;
    }
    if (path === "/shop/done") {
      const id = new URL(req.url ?? "", "http://x").searchParams.get("order") ?? "";
      send(
        res,
        page(
          "Order confirmed",
          `<main><h1>Order confirmed</h1><p>Your order number is ${esc(id)}.</p></main>`,
        ),
      );
      return true;
    }
    return false;
  }
  return { handle, orders };
}

function paymentPage(error: string, card = "", expiry = ""): string {
  return page(
    "Payment",
    `<main><h1>Payment</h1><form method="post" action="/shop/payment">
    <label for="card">Card number</label><input id="card" name="card" value="${esc(card)}" required>
    <label for="expiry">Expiry</label><input id="expiry" name="expiry" placeholder="MM/YY" value="${esc(expiry)}" ${error ? 'aria-invalid="true"' : ""} required>
    ${error ? `<p role="alert">${esc(error)}</p>` : ""}
    <button>Pay now</button></form></main>`,
  );
}
