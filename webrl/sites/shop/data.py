"""The shop's schema and deterministic seed data (One Stop Shop).

Everything comes from one `random.Random(SEED)`, so every process builds the
same catalogue, reviews, customers and order history. Money is stored in
integer cents; `money()` and `rating_text()` are the one place that formats
them, shared by the pages and by the task families that compute answers.
"""

from __future__ import annotations

import random
import sqlite3
from datetime import date, timedelta

from webrl.sites.common import AUTH_SCHEMA, hash_password

SEED = 20240315
TODAY = "2024-03-15"  # the shop's "today": date of new orders and reviews
DEFAULT_USER = ("emma", "emma-pass")
# Order numbers start here; chosen so that both task splits (which hold out order
# numbers by hash, see webrl.tasks.family.holdout) get cancelable orders.
FIRST_ORDER_ID = 148

SCHEMA = """
CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    username TEXT UNIQUE NOT NULL,
    password_hash TEXT NOT NULL,
    full_name TEXT NOT NULL,
    email TEXT NOT NULL,
    phone TEXT NOT NULL,
    street TEXT NOT NULL,
    city TEXT NOT NULL,
    state TEXT NOT NULL,
    zip TEXT NOT NULL
);
CREATE TABLE categories (
    id INTEGER PRIMARY KEY,
    slug TEXT UNIQUE NOT NULL,
    name TEXT NOT NULL
);
CREATE TABLE products (
    id INTEGER PRIMARY KEY,
    category_id INTEGER NOT NULL REFERENCES categories(id),
    name TEXT UNIQUE NOT NULL,
    sku TEXT UNIQUE NOT NULL,
    price_cents INTEGER NOT NULL,
    description TEXT NOT NULL,
    stock INTEGER NOT NULL,
    featured INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX products_category ON products(category_id);
CREATE TABLE reviews (
    id INTEGER PRIMARY KEY,
    product_id INTEGER NOT NULL REFERENCES products(id),
    user_id INTEGER REFERENCES users(id),
    author TEXT NOT NULL,
    rating INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 5),
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    created TEXT NOT NULL
);
CREATE INDEX reviews_product ON reviews(product_id);
CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    number TEXT UNIQUE NOT NULL,
    user_id INTEGER NOT NULL REFERENCES users(id),
    created TEXT NOT NULL,
    status TEXT NOT NULL,
    shipping_method TEXT NOT NULL,
    shipping_cents INTEGER NOT NULL,
    subtotal_cents INTEGER NOT NULL,
    total_cents INTEGER NOT NULL,
    ship_name TEXT NOT NULL,
    ship_street TEXT NOT NULL,
    ship_city TEXT NOT NULL,
    ship_state TEXT NOT NULL,
    ship_zip TEXT NOT NULL,
    ship_phone TEXT NOT NULL
);
CREATE INDEX orders_user ON orders(user_id);
CREATE TABLE order_items (
    id INTEGER PRIMARY KEY,
    order_id INTEGER NOT NULL REFERENCES orders(id),
    product_id INTEGER NOT NULL REFERENCES products(id),
    name TEXT NOT NULL,
    price_cents INTEGER NOT NULL,
    qty INTEGER NOT NULL
);
CREATE INDEX order_items_order ON order_items(order_id);
CREATE TABLE cart_items (
    user_id INTEGER NOT NULL REFERENCES users(id),
    product_id INTEGER NOT NULL REFERENCES products(id),
    qty INTEGER NOT NULL,
    PRIMARY KEY (user_id, product_id)
);
CREATE TABLE wishlist (
    user_id INTEGER NOT NULL REFERENCES users(id),
    product_id INTEGER NOT NULL REFERENCES products(id),
    added TEXT NOT NULL,
    PRIMARY KEY (user_id, product_id)
);
"""

# key -> (label, cost in cents); labels are what the checkout select shows.
SHIPPING = {
    "standard": ("Standard shipping", 500),
    "express": ("Express shipping", 1500),
    "overnight": ("Overnight shipping", 2500),
}
STATUSES = ("pending", "processing", "shipped", "delivered", "canceled")
CANCELABLE = ("pending", "processing")

# sort key -> (label, SQL ORDER BY over the product listing query's columns)
SORTS = {
    "relevance": ("Relevance", "relevance, p.id"),
    "price_asc": ("Price: low to high", "p.price_cents, p.id"),
    "price_desc": ("Price: high to low", "p.price_cents DESC, p.id"),
    "rating": ("Rating", "avg_rating DESC, n_reviews DESC, p.id"),
    "name": ("Name", "p.name, p.id"),
}

# slug, name, SKU prefix, (min, max) dollars, brands, modifiers, nouns, blurbs
# fmt: off
CATEGORIES = [
    ("electronics", "Electronics", "EL", (15, 250),
     ["Voltra", "Nexon", "Auralis", "Kestrel", "Lumio"],
     ["Wireless", "Portable", "Compact", "Pro", "Smart", "Ultra-Slim"],
     ["Headphones", "Bluetooth Speaker", "Power Bank", "Webcam", "Keyboard", "Phone Charger"],
     ["Pairs in seconds and lasts all day.", "Ships with a USB-C cable.", "Backed by a two-year warranty."]),
    ("home-kitchen", "Home & Kitchen", "HK", (8, 120),
     ["Hearthly", "Copperleaf", "Nordvik", "Mesa", "Olla"],
     ["Stainless Steel", "Bamboo", "Ceramic", "Cast Iron", "Glass", "Nonstick"],
     ["Frying Pan", "Cutting Board", "Mixing Bowl", "Teapot", "Utensil Set", "Storage Jar"],
     ["Dishwasher safe.", "Built for everyday cooking.", "Easy to clean and store."]),
    ("beauty", "Beauty & Personal Care", "BE", (4, 45),
     ["Velvette", "Purely", "Solenne", "Bloom & Co", "Aveline"],
     ["Hydrating", "Vitamin C", "Unscented", "Rose", "Charcoal", "Aloe"],
     ["Face Cream", "Shampoo", "Body Lotion", "Lip Balm", "Face Serum", "Hand Soap"],
     ["Gentle on sensitive skin.", "Made without parabens.", "Cruelty-free formula."]),
    ("sports-outdoors", "Sports & Outdoors", "SO", (10, 300),
     ["Trailmark", "Summitex", "Ridgeway", "Aerofit", "Bluecrest"],
     ["Lightweight", "Waterproof", "Insulated", "Foldable", "Heavy-Duty", "Ultralight"],
     ["Camping Tent", "Water Bottle", "Yoga Mat", "Hiking Backpack", "Sleeping Bag", "Trekking Poles"],
     ["Tested on real trails.", "Packs down small.", "Built for all seasons."]),
    ("clothing", "Clothing & Shoes", "CL", (9, 120),
     ["Northloom", "Cobalt Row", "Fernwear", "Urbano", "Halden"],
     ["Cotton", "Wool", "Linen", "Fleece", "Denim", "Quilted"],
     ["T-Shirt", "Hoodie", "Jacket", "Scarf", "Socks", "Beanie"],
     ["Machine washable.", "Relaxed, true-to-size fit.", "Soft and breathable."]),
    ("office", "Office Products", "OF", (3, 80),
     ["Scriva", "Deskline", "Papermint", "Officio", "Linea"],
     ["Recycled", "Ergonomic", "Magnetic", "Spiral", "Leather", "Adjustable"],
     ["Notebook", "Desk Organizer", "Monitor Stand", "Pen Set", "File Folder", "Whiteboard"],
     ["Keeps your desk tidy.", "Great for home offices.", "Sturdy and simple."]),
    ("toys-games", "Toys & Games", "TG", (6, 90),
     ["Playnest", "Brickton", "Wonderly", "Tinker Tots", "Funfield"],
     ["Wooden", "Magnetic", "Deluxe", "Classic", "Mini", "Glow-in-the-Dark"],
     ["Puzzle", "Building Blocks", "Board Game", "Train Set", "Card Game", "Plush Bear"],
     ["For ages 4 and up.", "Hours of family fun.", "Made with non-toxic materials."]),
    ("grocery", "Grocery & Gourmet", "GR", (3, 30),
     ["Harvest Lane", "Golden Grove", "Little Farm", "Sierra Roast", "Tidewater"],
     ["Organic", "Dark Roast", "Honey", "Sea Salt", "Spicy", "Gluten-Free"],
     ["Coffee Beans", "Granola", "Almonds", "Pasta Sauce", "Green Tea", "Crackers"],
     ["Small-batch and fresh.", "No artificial flavors.", "Resealable pack."]),
    ("health-household", "Health & Household", "HH", (4, 50),
     ["Vitalis", "Clearwell", "Pureform", "Medora", "Evercare"],
     ["Daily", "Extra Strength", "Fragrance-Free", "Eco", "Travel", "Family Size"],
     ["Multivitamin", "Laundry Detergent", "Paper Towels", "First Aid Kit", "Dish Soap", "Hand Sanitizer"],
     ["Trusted by families.", "Value size.", "Plant-based ingredients."]),
    ("patio-garden", "Patio & Garden", "PG", (8, 150),
     ["Greenhaven", "Terrano", "Bloomfield", "Rootwell", "Sunpatch"],
     ["Solar", "Raised", "Self-Watering", "Galvanized", "Hanging", "Weatherproof"],
     ["Planter", "Garden Hose", "String Lights", "Bird Feeder", "Pruning Shears", "Garden Kneeler"],
     ["Made to last outdoors.", "Easy to assemble.", "Rust-resistant finish."]),
    ("pet-supplies", "Pet Supplies", "PS", (7, 180),
     ["Pawsome", "Furrow", "Whisker & Tail", "Barkley", "Petluxe"],
     ["Orthopedic", "Chew-Proof", "Grain-Free", "Reflective", "Calming", "Self-Cleaning"],
     ["Dog Bed", "Cat Tree", "Dog Leash", "Pet Bowl", "Cat Litter Box", "Chew Toy"],
     ["Vet recommended.", "Pets love it.", "Easy to wash."]),
    ("automotive", "Automotive", "AU", (10, 160),
     ["Roadster", "Torqline", "Motiv", "Pitstop", "Gearhead"],
     ["Heavy-Duty", "Digital", "Universal", "Cordless", "All-Weather", "Compact"],
     ["Tire Inflator", "Car Vacuum", "Phone Mount", "Floor Mats", "Jump Starter", "Seat Cover"],
     ["Fits most cars and SUVs.", "Installs in minutes.", "Road-tested durability."]),
]
PRODUCTS_PER_CATEGORY = 25

FIRST_NAMES = [
    "Olivia", "Liam", "Ava", "Noah", "Mia", "Ethan", "Sofia", "Lucas", "Chloe", "Mason",
    "Grace", "Logan", "Lily", "Elijah", "Zoe", "James", "Hannah", "Aiden", "Nora", "Carter",
    "Priya", "Mateo", "Aisha", "Kenji", "Fatima", "Diego", "Ingrid", "Tomas", "Leila", "Omar",
]
LAST_NAMES = [
    "Smith", "Nguyen", "Garcia", "Brown", "Patel", "Kim", "Johnson", "Rossi", "Cohen", "Silva",
    "Martin", "Okafor", "Larsen", "Dubois", "Novak", "Tanaka", "Walsh", "Reyes", "Moreau", "Ali",
]
TITLES = {
    5: ["Absolutely love it", "Exceeded my expectations",
        "Best purchase this year", "Highly recommend", "Perfect"],
    4: ["Very good", "Solid choice", "Happy with it", "Great value", "Would buy again"],
    3: ["It's okay", "Does the job", "Average quality", "Mixed feelings"],
    2: ["Disappointed", "Not great", "Expected more"],
    1: ["Broke quickly", "Would not buy again", "Waste of money"],
}
BODIES = {
    5: ["Works exactly as described and arrived early.", "Great quality for the price.",
        "I use it every day."],
    4: ["Good product, minor issues with the packaging.", "Does what it says. Shipping was fast.",
        "Nice, but a bit pricey."],
    3: ["Fine for the price, nothing special.", "Some parts feel cheap.",
        "Okay, but I expected better."],
    2: ["Stopped working after a few weeks.", "Smaller than it looks in the photos.",
        "Quality is below average."],
    1: ["Arrived damaged and support did not help.", "Fell apart on first use.",
        "Not as described at all."],
}
STREETS = ["Maple Ave", "Oak St", "Pine Rd", "Cedar Ln", "Elm St", "Birch Way", "Harbor Blvd", "Lake Dr"]
CITIES = [("Portland", "OR", "972"), ("Austin", "TX", "787"), ("Denver", "CO", "802"),
          ("Boston", "MA", "021"), ("Seattle", "WA", "981"), ("Chicago", "IL", "606")]
# fmt: on


def money(cents: int) -> str:
    """$1,234.56 — the one money format used by pages and task answers."""
    return f"${cents // 100:,}.{cents % 100:02d}"


def rating_text(total: int, count: int) -> str:
    """Average rating with one decimal, rounded half up ("4.3"); "" if unrated."""
    if not count:
        return ""
    tenths = (2 * 10 * total + count) // (2 * count)
    return f"{tenths // 10}.{tenths % 10}"


def order_number(order_id: int) -> str:
    return f"{order_id:06d}"


def build_db(conn: sqlite3.Connection) -> None:
    """Create the schema and fill it with the deterministic seed data."""
    conn.executescript(SCHEMA + AUTH_SCHEMA)
    rng = random.Random(SEED)
    _categories_and_products(conn, rng)
    users = _users(conn, rng)
    _reviews(conn, rng, users)
    _orders(conn, rng, users)
    emma = users[0]["id"]
    for pid in rng.sample(range(1, 301), 3):
        conn.execute("INSERT INTO wishlist VALUES (?, ?, ?)", (emma, pid, "2024-02-01"))


def _categories_and_products(conn: sqlite3.Connection, rng: random.Random) -> None:
    used_prices: set[int] = set()
    pid = 0
    for cid, (slug, name, code, (lo, hi), brands, mods, nouns, blurbs) in enumerate(CATEGORIES, 1):
        conn.execute("INSERT INTO categories VALUES (?, ?, ?)", (cid, slug, name))
        combos = [(b, m, n) for b in brands for m in mods for n in nouns]
        for brand, mod, noun in rng.sample(combos, PRODUCTS_PER_CATEGORY):
            pid += 1
            while True:  # distinct prices keep "cheapest"/"most expensive" unambiguous
                cents = rng.randint(lo, hi) * 100 + rng.choice([99, 49, 95, 0, 29])
                if cents not in used_prices:
                    used_prices.add(cents)
                    break
            stock = 0 if rng.random() < 0.06 else rng.randint(1, 150)
            desc = f"{mod} {noun.lower()} by {brand}. {rng.choice(blurbs)}"
            sku = f"{code}-{brand[:3].upper()}-{pid:04d}"
            conn.execute(
                "INSERT INTO products VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (pid, cid, f"{brand} {mod} {noun}", sku, cents, desc, stock, 0),
            )
    featured = rng.sample(range(1, pid + 1), 6)
    conn.executemany("UPDATE products SET featured = 1 WHERE id = ?", [(f,) for f in featured])


def _users(conn: sqlite3.Connection, rng: random.Random) -> list[dict]:
    people = [("emma", "Emma Lopez")]
    names = rng.sample([(f, la) for f in FIRST_NAMES for la in LAST_NAMES], 11)
    people += [(f"{f.lower()}{la[0].lower()}", f"{f} {la}") for f, la in names]
    users = []
    for uid, (username, full) in enumerate(people, 1):
        city, state, zip3 = CITIES[0] if uid == 1 else rng.choice(CITIES)
        street = "1234 Maple Ave" if uid == 1 else f"{rng.randint(10, 9999)} {rng.choice(STREETS)}"
        user = dict(
            id=uid,
            username=username,
            password_hash=hash_password(f"{username}-pass"),
            full_name=full,
            email=f"{username}@example.com",
            phone=f"555-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
            street=street,
            city=city,
            state=state,
            zip=f"{zip3}{rng.randint(10, 99)}",
        )
        conn.execute(
            "INSERT INTO users VALUES (:id, :username, :password_hash, :full_name, :email, :phone,"
            " :street, :city, :state, :zip)",
            user,
        )
        users.append(user)
    return users


def _days(rng: random.Random, start: str, end: str, k: int) -> list[str]:
    """k distinct ISO dates in [start, end], sorted."""
    d0, d1 = date.fromisoformat(start), date.fromisoformat(end)
    offsets = rng.sample(range((d1 - d0).days + 1), k)
    return sorted((d0 + timedelta(days=o)).isoformat() for o in offsets)


def _reviews(conn: sqlite3.Connection, rng: random.Random, users: list[dict]) -> None:
    reviewers = users[1:]
    extra = rng.sample([f"{f} {la[0]}." for f in FIRST_NAMES for la in LAST_NAMES], 60)
    authors = [u["full_name"] for u in reviewers] + extra
    for pid in range(1, 301):
        quality = rng.choice([2, 3, 3, 4, 4, 4, 5, 5])
        n = rng.choice([0, 0, 0, 1, 1, 1, 2, 2, 3, 3, 4, 5, 7, 11])
        who = rng.sample(authors, n)  # one review per author per product
        for day, author in zip(_days(rng, "2020-01-01", "2024-02-28", n), who, strict=True):
            rating = max(1, min(5, quality + rng.choice([-2, -1, 0, 0, 0, 1])))
            uid = next((u["id"] for u in reviewers if u["full_name"] == author), None)
            conn.execute(
                "INSERT INTO reviews (product_id, user_id, author, rating, title, body, created)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    pid,
                    uid,
                    author,
                    rating,
                    rng.choice(TITLES[rating]),
                    rng.choice(BODIES[rating]),
                    day,
                ),
            )


def _orders(conn: sqlite3.Connection, rng: random.Random, users: list[dict]) -> None:
    plans = []  # (date, user, status)
    emma_days = _days(rng, "2022-01-10", "2024-03-12", 22)
    for i, day in enumerate(emma_days):
        age = len(emma_days) - 1 - i  # 0 = newest
        recent = ["pending"] * 3 + ["processing"] * 3 + ["shipped"] * 3
        old = "canceled" if age in (11, 16) else "delivered"
        status = recent[age] if age < len(recent) else old
        plans.append((day, users[0], status))
    for user in users[1:]:
        for day in _days(rng, "2022-01-10", "2024-03-12", rng.randint(2, 6)):
            plans.append(
                (day, user, rng.choice(["delivered"] * 4 + ["shipped", "canceled", "pending"]))
            )
    plans.sort(key=lambda p: (p[0], p[1]["id"]))
    prices = dict(conn.execute("SELECT id, price_cents FROM products").fetchall())
    names = dict(conn.execute("SELECT id, name FROM products").fetchall())
    for oid, (day, user, status) in enumerate(plans, FIRST_ORDER_ID):
        items = [
            (pid, rng.choice([1, 1, 1, 2, 3]))
            for pid in rng.sample(range(1, 301), rng.choice([1, 1, 2, 2, 3]))
        ]
        subtotal = sum(prices[pid] * qty for pid, qty in items)
        method = rng.choice(["standard", "standard", "express", "overnight"])
        ship = SHIPPING[method][1]
        conn.execute(
            "INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (oid, order_number(oid), user["id"], day, status, method, ship, subtotal, subtotal + ship,
             user["full_name"], user["street"], user["city"], user["state"], user["zip"], user["phone"]),
        )  # fmt: skip
        for pid, qty in items:
            conn.execute(
                "INSERT INTO order_items (order_id, product_id, name, price_cents, qty) VALUES (?, ?, ?, ?, ?)",
                (oid, pid, names[pid], prices[pid], qty),
            )
