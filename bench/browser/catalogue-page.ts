/**
 * The large page of the browser benchmark: a shop's admin catalogue of about 5,000 DOM elements
 * (header and navigation, a search form, a filter sidebar of nested category lists and brand
 * checkboxes, a product table whose rows each hold a checkbox, a link, a status select, a quantity
 * field and two buttons, pagination, a footer) with hidden parts a snapshot must leave out: a
 * closed dialog, `hidden` detail rows, a `visibility: hidden` menu, hidden inputs. Every
 * interactive element carries its accessible name in `data-name` (all different), so a check can
 * find each one in a snapshot by name. Deterministic; served by `node:http` on 127.0.0.1.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

const BRANDS = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", "Tyrell"];
const CATEGORIES: Record<string, string[]> = {
  Kitchen: ["Cookware", "Knives", "Small appliances", "Tableware"],
  Garden: ["Tools", "Planters", "Seeds", "Irrigation"],
  Office: ["Desks", "Chairs", "Lamps", "Stationery"],
  Outdoor: ["Tents", "Backpacks", "Stoves", "Lighting"],
  Home: ["Bedding", "Bath", "Storage", "Decor"],
};
const STATUSES = ["Active", "Draft", "Archived"];

const escapeHtml = (text: string) =>
  text.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);

/** A product row; `hiddenDetail` adds a `hidden` detail row after it. */
function row(i: number): string {
  const sku = `SKU-${String(1000 + i)}`;
  const brand = BRANDS[i % BRANDS.length]!;
  const categories = Object.keys(CATEGORIES);
  const category = categories[i % categories.length]!;
  const name = `${brand} ${CATEGORIES[category]![i % 4]!.toLowerCase()} model ${i + 1}`;
  const price = (((i * 37) % 400) + 9.99).toFixed(2);
  const stock = (i * 13) % 120;
  const status = STATUSES[i % STATUSES.length]!;
  const options = STATUSES.map(
    (s) => `<option value="${s.toLowerCase()}"${s === status ? " selected" : ""}>${s}</option>`,
  ).join("");
  const detail =
    i % 10 === 0
      ? `<tr class="detail" hidden><td colspan="8"><p>Supplier notes for ${sku}</p><button type="button" data-name="Reorder ${sku}">Reorder ${sku}</button></td></tr>`
      : "";
  return `<tr id="row-${i}">
<td><input type="checkbox" id="pick-${i}" aria-label="Select ${sku}" data-name="Select ${sku}"></td>
<td><a href="/products/${i}" data-name="${escapeHtml(name)}">${escapeHtml(name)}</a><div class="meta"><span class="sku">${sku}</span> · <span>${category}</span></div></td>
<td class="num"><span class="currency">€</span><span>${price}</span></td>
<td class="num"><span class="${stock < 10 ? "low" : "ok"}">${stock}</span> <small>in stock</small></td>
<td><select aria-label="Status of ${sku}" data-name="Status of ${sku}">${options}</select></td>
<td><input type="number" min="0" value="${stock}" aria-label="Quantity of ${sku}" data-name="Quantity of ${sku}"></td>
<td><div class="actions"><button type="button" class="edit" data-name="Edit ${sku}"><span class="icon" aria-hidden="true">✎</span> Edit ${sku}</button>
<button type="button" class="danger" data-name="Delete ${sku}"><span class="icon" aria-hidden="true">✕</span> Delete ${sku}</button></div></td>
<td><input type="hidden" name="id-${i}" value="${i}"></td>
</tr>${detail}`;
}

function sidebar(): string {
  const tree = Object.entries(CATEGORIES)
    .map(
      ([top, subs]) =>
        `<li><a href="/c/${top.toLowerCase()}" data-name="${top}">${top}</a><ul>${subs
          .map(
            (sub) =>
              `<li><a href="/c/${top.toLowerCase()}/${sub.toLowerCase().replace(/ /g, "-")}" data-name="${top}: ${sub}">${top}: ${sub}</a> <span class="count">(${sub.length * 7})</span></li>`,
          )
          .join("")}</ul></li>`,
    )
    .join("");
  const brands = BRANDS.map(
    (b) =>
      `<li><label><input type="checkbox" name="brand" value="${b}" data-name="${b}"> ${b}</label></li>`,
  ).join("");
  return `<aside aria-label="Filters"><h2>Filters</h2>
<nav aria-label="Categories"><ul>${tree}</ul></nav>
<fieldset><legend>Brand</legend><ul>${brands}</ul></fieldset>
<fieldset><legend>Price</legend>
<label>Min price <input type="number" name="min" data-name="Min price"></label>
<label>Max price <input type="number" name="max" data-name="Max price"></label></fieldset>
<label>Notes <textarea name="notes" data-name="Notes"></textarea></label>
<button type="button" data-name="Apply filters">Apply filters</button></aside>`;
}

/** The page's HTML with `rows` product rows (150 give about 5,000 elements). */
export function cataloguePage(rows = 150): string {
  const nav = ["Dashboard", "Orders", "Products", "Customers", "Reports", "Settings"]
    .map((n) => `<li><a href="/${n.toLowerCase()}" data-name="${n}">${n}</a></li>`)
    .join("");
  const pages = Array.from(
    { length: 10 },
    (_, i) => `<li><a href="?page=${i + 1}" data-name="Page ${i + 1}">Page ${i + 1}</a></li>`,
  ).join("");
  const footer = ["Help", "Privacy", "Terms", "Status", "API"]
    .map((n) => `<li><a href="/${n.toLowerCase()}" data-name="${n}">${n}</a></li>`)
    .join("");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Catalogue admin</title>
<style>body{font:14px sans-serif;margin:0}header,footer{padding:8px;background:#eee}
.layout{display:flex}aside{width:240px;padding:8px}main{flex:1;padding:8px}
table{border-collapse:collapse;width:100%}td{border-bottom:1px solid #ddd;padding:2px 4px}
.num{text-align:right}.low{color:#b00}.meta{color:#666;font-size:12px}
.menu{visibility:hidden;position:absolute}.sr-only{display:none}</style></head>
<body>
<header><a href="/" data-name="Shop admin">Shop admin</a>
<nav aria-label="Main"><ul>${nav}</ul></nav>
<form role="search" action="/search"><label>Search products <input type="search" name="q" data-name="Search products"></label>
<select name="category" aria-label="Category" data-name="Category"><option>All</option>${Object.keys(
    CATEGORIES,
  )
    .map((c) => `<option>${c}</option>`)
    .join("")}</select>
<button type="submit" data-name="Search">Search</button></form>
<div class="menu" id="account-menu"><a href="/logout" data-name="Log out">Log out</a><button type="button" data-name="Switch account">Switch account</button></div>
<button type="button" data-name="Account" aria-haspopup="menu">Account</button>
</header>
<div class="layout">${sidebar()}
<main><h1>Products</h1>
<p>Showing ${rows} of ${rows * 10} products. <span class="sr-only">Use the filters to narrow the list.</span></p>
<div role="status">Saved 3 minutes ago</div>
<div class="bulk"><button type="button" data-name="Select all">Select all</button>
<button type="button" data-name="Export CSV">Export CSV</button>
<button type="button" data-name="Delete selected" disabled>Delete selected</button>
<span id="clicks">0</span> clicks</div>
<table><thead><tr><th>Pick</th><th>Product</th><th>Price</th><th>Stock</th><th>Status</th><th>Quantity</th><th>Actions</th><th></th></tr></thead>
<tbody>${Array.from({ length: rows }, (_, i) => row(i)).join("\n")}</tbody></table>
<nav aria-label="Pagination"><ul>${pages}</ul></nav>
</main></div>
<dialog id="confirm"><form method="dialog"><p>Delete this product?</p><button data-name="Confirm delete">Confirm delete</button><button data-name="Cancel">Cancel</button></form></dialog>
<footer><ul>${footer}</ul><p>© 2026 Example Shop</p></footer>
<script>let n=0;document.addEventListener("click",(e)=>{if(e.target.closest("button.edit")){n++;document.getElementById("clicks").textContent=String(n);}});</script>
</body></html>`;
}

/** A loopback server answering every GET with the catalogue page (others with 404). */
export async function serveCatalogue(
  html: string,
): Promise<{ origin: string; host: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    if (request.method !== "GET") {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
