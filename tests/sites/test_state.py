"""Snapshots, per-episode copies, and databases shared between sites."""

from webrl.sites.state import SiteSpec, SnapshotStore, WorldState


def build_shop(conn):
    conn.execute("CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT, stock INTEGER)")
    conn.execute("INSERT INTO products(name, stock) VALUES ('mug', 5)")


def build_admin(conn):  # runs on the shop's database, after the shop's builder
    conn.execute("CREATE TABLE staff(id INTEGER PRIMARY KEY, username TEXT)")
    conn.execute("INSERT INTO staff(username) SELECT 'admin-of-' || name FROM products")


SPECS = {
    "shop": SiteSpec("shop", "Shop", build_shop, object, ("u", "p")),
    "admin": SiteSpec("admin", "Admin", build_admin, object, ("a", "p"), database="shop"),
}


def test_shared_database_is_one_copy_per_episode():
    store = SnapshotStore(SPECS)
    assert store.snapshot("admin") is store.snapshot("shop")
    assert store.snapshot("shop").execute("SELECT username FROM staff").fetchone()[0] == "admin-of-mug"
    ep1, ep2 = WorldState(store), WorldState(store)
    admin_db = ep1.db(SPECS["admin"].db_name)
    admin_db.execute("UPDATE products SET stock = 0")
    assert ep1.db("shop").execute("SELECT stock FROM products").fetchone()[0] == 0  # same episode sees it
    assert ep2.db("shop").execute("SELECT stock FROM products").fetchone()[0] == 5  # others do not
    assert store.snapshot("shop").execute("SELECT stock FROM products").fetchone()[0] == 5
    ep1.close()
    assert WorldState(store).db("shop").execute("SELECT stock FROM products").fetchone()[0] == 5
