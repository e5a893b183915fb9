"""The forum's schema and deterministic seed data (a small Reddit / Postmill).

Everything comes from one `random.Random(SEED)`, so every process builds the
same forums, users, posts, comments and votes. Scores are stored aggregates;
a user's own votes live in `post_votes`. Karma is the sum of a user's post and
comment scores, kept up to date when votes change it.
"""

from __future__ import annotations

import random
import sqlite3
from datetime import datetime, timedelta

from webrl.sites.common import AUTH_SCHEMA, hash_password

SEED = 20240101
DEFAULT_USER = ("marvin", "marvin-pass")
N_USERS = 80
N_POSTS = 400
N_COMMENTS = 1500
START = datetime(2022, 1, 1)
END = datetime(2023, 12, 31)

SCHEMA = """
CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    username TEXT UNIQUE NOT NULL,
    password_hash TEXT NOT NULL,
    joined TEXT NOT NULL,
    bio TEXT NOT NULL DEFAULT '',
    karma INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE forums (
    id INTEGER PRIMARY KEY,
    name TEXT UNIQUE NOT NULL,
    title TEXT NOT NULL,
    description TEXT NOT NULL,
    created TEXT NOT NULL,
    subscribers INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE subscriptions (
    user_id INTEGER NOT NULL REFERENCES users(id),
    forum_id INTEGER NOT NULL REFERENCES forums(id),
    PRIMARY KEY (user_id, forum_id)
);
CREATE TABLE posts (
    id INTEGER PRIMARY KEY,
    forum_id INTEGER NOT NULL REFERENCES forums(id),
    user_id INTEGER NOT NULL REFERENCES users(id),
    title TEXT NOT NULL,
    body TEXT NOT NULL DEFAULT '',
    url TEXT NOT NULL DEFAULT '',
    created TEXT NOT NULL,
    score INTEGER NOT NULL DEFAULT 1,
    edited INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX posts_forum ON posts(forum_id);
CREATE INDEX posts_user ON posts(user_id);
CREATE TABLE comments (
    id INTEGER PRIMARY KEY,
    post_id INTEGER NOT NULL REFERENCES posts(id),
    parent_id INTEGER REFERENCES comments(id),
    user_id INTEGER NOT NULL REFERENCES users(id),
    body TEXT NOT NULL,
    created TEXT NOT NULL,
    score INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX comments_post ON comments(post_id);
CREATE INDEX comments_user ON comments(user_id);
CREATE TABLE post_votes (
    user_id INTEGER NOT NULL REFERENCES users(id),
    post_id INTEGER NOT NULL REFERENCES posts(id),
    value INTEGER NOT NULL CHECK (value IN (-1, 1)),
    PRIMARY KEY (user_id, post_id)
);
"""

# name, title, description, subjects, title templates
FORUMS: list[tuple[str, str, str, list[str], list[str]]] = [
    ("books", "Books", "Reading, reviews and recommendations for every kind of reader.",
     ["Dune", "The Left Hand of Darkness", "Middlemarch", "Piranesi", "The Name of the Rose",
      "Beloved", "Project Hail Mary", "Wolf Hall", "The Remains of the Day", "Gilead",
      "Never Let Me Go", "The Overstory"],
     ["Just finished {x} and I need to talk about the ending", "Is {x} worth reading in 2023?",
      "{x} is the most underrated book I read this year", "Book club pick: {x}, first impressions",
      "What should I read after {x}?", "Re-reading {x} ten years later"]),
    ("gaming", "Gaming", "Video games old and new: news, tips and discussion.",
     ["Elden Ring", "Hades", "Stardew Valley", "Baldur's Gate 3", "Celeste", "Factorio",
      "Hollow Knight", "Disco Elysium", "Outer Wilds", "Slay the Spire", "Civilization VI",
      "Tears of the Kingdom"],
     ["{x}: tips for a complete beginner?", "I finally beat {x} after 80 hours",
      "Is {x} still worth buying?", "The soundtrack of {x} deserves more love",
      "Hot take: {x} is overrated", "Looking for co-op partners in {x}"]),
    ("food", "Food & Cooking", "Recipes, techniques and kitchen disasters.",
     ["sourdough bread", "French onion soup", "chicken tikka masala", "homemade ramen", "lasagna",
      "banana bread", "shakshuka", "beef bourguignon", "pad thai", "cast iron steak", "risotto",
      "kimchi"],
     ["My first attempt at {x}", "How do you keep {x} from going soggy?", "Best recipe for {x}?",
      "{x} on a budget: what worked for me", "Why does my {x} always turn out bland?",
      "Made {x} for twelve people this weekend"]),
    ("science", "Science", "Discussion of research, discoveries and how the world works.",
     ["CRISPR gene editing", "the James Webb telescope", "quantum entanglement", "dark matter",
      "mRNA vaccines", "plate tectonics", "the placebo effect", "tardigrades", "nuclear fusion",
      "the gut microbiome", "gravitational waves", "room-temperature superconductors"],
     ["Can someone explain {x} in simple terms?", "New paper on {x} looks promising",
      "Common misconceptions about {x}", "How close are we to understanding {x}?",
      "A great documentary about {x}", "What got you interested in {x}?"]),
    ("movies", "Movies", "Film discussion, reviews and recommendations.",
     ["Blade Runner 2049", "Spirited Away", "Parasite", "The Godfather Part II",
      "Mad Max: Fury Road", "Arrival", "Oppenheimer", "Amelie", "Heat",
      "Everything Everywhere All at Once", "Alien", "Paddington 2"],
     ["Rewatched {x} last night", "{x} has the best opening scene ever",
      "Is {x} worth seeing in a theater?", "Underappreciated details in {x}",
      "{x} made me cry and I am not ashamed", "Discussion thread: {x}"]),
    ("music", "Music", "Listening, playing and collecting music.",
     ["vinyl collecting", "OK Computer", "learning jazz piano", "Kind of Blue", "home recording",
      "the Bach cello suites", "modular synthesizers", "Rumours", "music theory", "Daft Punk",
      "ear training", "Nina Simone"],
     ["Getting started with {x}", "What does {x} mean to you?",
      "Recommendations for a newcomer to {x}?", "Spent the whole weekend with {x}",
      "Why {x} still matters", "Unpopular opinion about {x}"]),
    ("technology", "Technology", "Gadgets, software and the tech industry.",
     ["mechanical keyboards", "Linux on an old laptop", "self-hosting email", "the Raspberry Pi 5",
      "password managers", "a home NAS build", "USB-C charging", "e-ink tablets",
      "open source routers", "Rust for systems programming", "backup strategies",
      "smart home privacy"],
     ["Is {x} worth the effort?", "My experience with {x} after one year",
      "Beginner questions about {x}", "The case against {x}", "{x}: what I wish I knew earlier",
      "Help me decide on {x}"]),
    ("fitness", "Fitness", "Training, running, lifting and staying healthy.",
     ["deadlift form", "couch to 5k", "kettlebell training", "marathon training",
      "progressive overload", "rest days", "calisthenics", "rowing machines", "protein intake",
      "mobility work", "swimming laps", "cycling in winter"],
     ["Questions about {x}", "Six months of {x}: my progress", "Common mistakes with {x}",
      "How do you stay motivated with {x}?", "Is {x} enough on its own?",
      "A beginner guide to {x}"]),
    ("travel", "Travel", "Trip reports, itineraries and travel advice.",
     ["Lisbon", "Kyoto", "Patagonia", "Iceland's ring road", "Marrakech", "the Scottish Highlands",
      "Hanoi", "Vienna", "the Amalfi coast", "Banff", "Istanbul", "New Zealand's South Island"],
     ["Two weeks in {x}: trip report", "First time visiting {x}, any tips?", "Is {x} overrated?",
      "A budget guide to {x}", "Best time of year to visit {x}?", "Solo travel in {x}"]),
    ("gardening", "Gardening", "Vegetables, flowers, houseplants and everything that grows.",
     ["tomatoes", "raised beds", "composting", "succulents", "blueberries", "garlic", "monstera",
      "native wildflowers", "potatoes in bags", "orchids", "lavender", "fig trees"],
     ["First year growing {x}", "Advice needed on {x}", "Progress photos: {x} this season",
      "What am I doing wrong with {x}?", "Cheap tricks for {x}",
      "Overwintering {x} in a cold climate"]),
    ("history", "History", "Discussion of the past, from antiquity to the last century.",
     ["the Roman Empire", "the Silk Road", "the Byzantine Empire", "the printing press",
      "ancient Egypt", "the Hanseatic League", "the Meiji Restoration", "the Black Death",
      "the Ottoman navy", "Viking trade routes", "the Inca road system",
      "the Industrial Revolution"],
     ["Best sources on {x}?", "A myth about {x} that will not die",
      "Overlooked facts about {x}", "Ask me anything about {x}",
      "Documentaries about {x} worth watching", "How historians study {x}"]),
    ("photography", "Photography", "Cameras, techniques, critique and inspiration.",
     ["street photography", "a 50mm prime lens", "film cameras", "astrophotography",
      "portrait lighting", "bird photography", "Lightroom presets", "long exposures",
      "macro lenses", "black and white", "drone photography", "golden hour"],
     ["Getting started with {x}", "Critique wanted: my first try at {x}",
      "Gear advice for {x}", "{x} mistakes I made so you don't",
      "Is {x} still worth it?", "Weekly challenge: {x}"]),
    ("frugal", "Frugal Living", "Budgeting, saving money, getting out of debt.",
     ["index funds", "an emergency fund", "paying off student loans",
      "a high-yield savings account", "budgeting apps", "retirement accounts",
      "buying a first home", "credit card debt", "the 50/30/20 rule", "side incomes",
      "car leasing", "tax refunds"],
     ["Questions about {x}", "How I handled {x} at 25", "Is {x} a good idea right now?",
      "Lessons learned from {x}", "{x} explained like I'm five", "Should I prioritise {x}?"]),
    ("diy", "DIY", "Home improvement, woodworking and repairs.",
     ["a bookshelf", "a kitchen backsplash", "a workbench", "a leaky faucet", "a garden shed",
      "drywall patching", "a standing desk", "deck staining", "a bathroom fan", "a tile floor",
      "a raised garden bed", "a squeaky door"],
     ["Built {x} this weekend", "First time tackling {x}", "How would you fix {x}?",
      "Tools needed for {x}?", "{x} for under 100 dollars", "Mistakes I made with {x}"]),
    ("pets", "Pets", "Dogs, cats, fish, birds and all our companions.",
     ["adopting a senior dog", "a shy rescue cat", "crate training", "aquarium cycling",
      "a parrot that screams", "leash pulling", "litter box problems", "a new puppy",
      "ferret care", "cats scratching furniture", "separation anxiety", "guinea pigs"],
     ["Advice on {x}", "Update on {x}, three months later", "Tips for {x}?",
      "Need help with {x}", "What worked for us with {x}", "Is this normal? A question about {x}"]),
]  # fmt: skip

BODY_SENTENCES = [
    "I have been thinking about {x} a lot lately.",
    "Curious what everyone here thinks about {x}.",
    "Long time lurker, first post.",
    "Would love to hear your experiences.",
    "I searched the forum but could not find a recent thread on this.",
    "Any advice is appreciated.",
    "My friends are tired of hearing me talk about {x}, so here I am.",
    "This took me way longer than expected.",
    "Happy to answer questions in the comments.",
    "Edit: thanks for all the replies so far!",
    "I am not an expert, just an enthusiast.",
    "Sources and details are in the comments.",
]

COMMENT_SENTENCES = [
    "Great post, thanks for sharing.",
    "I had the exact same experience with {x}.",
    "Strongly disagree, but I see where you are coming from.",
    "This is the kind of content I come here for.",
    "Can you share more details?",
    "Came here to say this.",
    "Honestly {x} changed my mind about a lot of things.",
    "Underrated comment.",
    "I tried this last year and it did not work for me.",
    "Same here!",
    "Have you looked at the sidebar? There is a guide.",
    "Saving this thread for later.",
    "Not sure I agree about {x}, but good write-up.",
    "The second point is spot on.",
    "Username checks out.",
    "Thanks, this is really helpful.",
    "Take my upvote.",
    "Does anyone have a source for that?",
    "I have been doing this for years and still learn something new.",
    "Patience is the key with {x}.",
    "My experience was the complete opposite.",
    "This deserves more attention.",
    "Good luck, keep us posted!",
    "Wow, I never knew that.",
    "Could not have said it better myself.",
]

NAME_A = ["quiet", "rusty", "amber", "lunar", "brave", "salty", "mellow", "nimble", "cosmic",
          "dusty", "gentle", "happy", "iron", "jolly", "misty", "noble", "polar", "rapid", "sunny",
          "tidy", "urban", "vivid", "witty", "zesty", "crimson", "fuzzy", "golden", "hidden"]  # fmt: skip
NAME_B = ["otter", "falcon", "teapot", "pixel", "badger", "cactus", "comet", "maple", "walrus",
          "wizard", "panda", "lantern", "pebble", "raven", "sparrow", "tiger", "violin", "willow",
          "yak", "acorn", "beacon", "cobalt", "dingo", "ember", "fjord", "gecko", "harbor"]  # fmt: skip
BIO_PARTS = [
    "Amateur {a} and part-time {b}.",
    "I mostly lurk in f/{f}.",
    "Coffee first, opinions second.",
    "Living somewhere rainy with two cats.",
    "Retired teacher, forever curious.",
    "Software developer by day, {a} by night.",
    "Here for the {f} threads.",
    "Trying to be nicer on the internet.",
    "Ask me about {f}.",
    "Grad student. Procrastinating right now.",
]
HOBBIES = ["baker", "gardener", "photographer", "runner", "guitarist", "birdwatcher", "woodworker",
           "reader", "gamer", "traveller", "cook", "hiker"]  # fmt: skip

MARVIN_BIO = "Brain the size of a planet, and they ask me to moderate f/books."
MARVIN_SUBSCRIPTIONS = ("books", "science", "technology", "movies", "food")


def fmt(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%d %H:%M:%S")


def capitalize(text: str) -> str:
    return text[:1].upper() + text[1:]


def _usernames(rng: random.Random) -> list[str]:
    names: list[str] = []
    seen = {DEFAULT_USER[0]}
    while len(names) < N_USERS - 1:
        style = rng.random()
        a, b = rng.choice(NAME_A), rng.choice(NAME_B)
        if style < 0.4:
            name = f"{a}_{b}"
        elif style < 0.7:
            name = f"{a.capitalize()}{b.capitalize()}{rng.randint(1, 99)}"
        else:
            name = f"{b}{rng.randint(10, 2023)}"
        if name.lower() not in seen:
            seen.add(name.lower())
            names.append(name)
    return names


def _titles(rng: random.Random) -> list[tuple[str, str, str]]:
    """(forum name, subject, title) for every post, unique titles, shuffled."""
    out: list[tuple[str, str, str]] = []
    spare: list[tuple[str, str, str]] = []
    weights = [rng.uniform(0.5, 1.5) for _ in FORUMS]
    total = sum(weights)
    for (name, _t, _d, subjects, templates), w in zip(FORUMS, weights, strict=True):
        n = max(12, round(N_POSTS * w / total))
        combos = [(s, t) for s in subjects for t in templates]
        rng.shuffle(combos)
        titles = [(name, s, capitalize(t.format(x=s))) for s, t in combos]
        out.extend(titles[:n])
        spare.extend(titles[n:])
    rng.shuffle(spare)
    out = (out + spare)[:N_POSTS]
    rng.shuffle(out)
    return out


def _post_score(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.08:
        return -rng.randint(0, 12)
    if r < 0.85:
        return rng.randint(1, 80)
    return rng.randint(81, 2400)


def build_db(conn: sqlite3.Connection) -> None:
    """Create the schema and fill it with the deterministic seed data."""
    rng = random.Random(SEED)
    conn.executescript(SCHEMA + AUTH_SCHEMA)

    # users ---------------------------------------------------------------------
    names = [DEFAULT_USER[0]] + _usernames(rng)
    forum_names = [f[0] for f in FORUMS]
    users = []
    for i, name in enumerate(names, start=1):
        joined = datetime(2015, 1, 1) + timedelta(days=rng.randint(0, 6 * 365))
        if name == DEFAULT_USER[0]:
            bio, password = MARVIN_BIO, DEFAULT_USER[1]
        else:
            bio = " ".join(
                p.format(a=rng.choice(HOBBIES), b=rng.choice(HOBBIES), f=rng.choice(forum_names))
                for p in rng.sample(BIO_PARTS, rng.randint(1, 2))
            )
            password = f"{name}-pass"
        users.append((i, name, hash_password(password), joined.strftime("%Y-%m-%d"), bio))
    conn.executemany(
        "INSERT INTO users (id, username, password_hash, joined, bio) VALUES (?, ?, ?, ?, ?)", users
    )
    user_ids = [u[0] for u in users]
    active = user_ids[1:]
    marvin = 1

    # forums --------------------------------------------------------------------
    forum_id = {}
    for i, (name, title, desc, _s, _t) in enumerate(FORUMS, start=1):
        created = datetime(2014, 6, 1) + timedelta(days=rng.randint(0, 900))
        subs = rng.randint(800, 60000)
        conn.execute(
            "INSERT INTO forums (id, name, title, description, created, subscribers) VALUES (?, ?, ?, ?, ?, ?)",
            (i, name, title, desc, created.strftime("%Y-%m-%d"), subs),
        )
        forum_id[name] = i
    for name in MARVIN_SUBSCRIPTIONS:
        conn.execute("INSERT INTO subscriptions VALUES (?, ?)", (marvin, forum_id[name]))

    # posts ---------------------------------------------------------------------
    span = int((END - START).total_seconds())
    posts = []  # (id, created datetime, subject, score, user)
    titles = _titles(rng)
    marvin_posts = set(rng.sample(range(len(titles)), 10))
    for i, (fname, subject, title) in enumerate(titles, start=1):
        created = START + timedelta(seconds=rng.randint(0, span - 86400 * 10))
        user = marvin if i - 1 in marvin_posts else rng.choice(active)
        score = _post_score(rng)
        if rng.random() < 0.15:
            slug = "-".join(w.strip(":?!,.'").lower() for w in title.split()[:6])
            url, body = f"https://example.org/{fname}/{slug}", ""
        else:
            k = rng.randint(1, 3)
            body = " ".join(s.format(x=subject) for s in rng.sample(BODY_SENTENCES, k))
            url = ""
        conn.execute(
            "INSERT INTO posts (id, forum_id, user_id, title, body, url, created, score)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (i, forum_id[fname], user, title, body, url, fmt(created), score),
        )
        posts.append((i, created, subject, score))

    # comments: popular posts get more; replies nest up to 3 levels ----------------
    weights = [1 + max(p[3], 0) ** 0.5 for p in posts]
    by_post: dict[int, list[tuple[int, int, datetime]]] = {}  # post -> [(id, depth, created)]
    marvin_comment_budget = 24
    for cid in range(1, N_COMMENTS + 1):
        pid, pcreated, subject, _score = rng.choices(posts, weights)[0]
        thread = by_post.setdefault(pid, [])
        parent, depth, after = None, 0, pcreated
        shallow = [c for c in thread if c[1] < 2]
        if shallow and rng.random() < 0.45:
            parent, pdepth, after = rng.choice(shallow)
            depth = pdepth + 1
        created = min(after + timedelta(minutes=rng.randint(3, 60 * 24 * 4)), END)
        if marvin_comment_budget and rng.random() < 0.02:
            user, marvin_comment_budget = marvin, marvin_comment_budget - 1
        else:
            user = rng.choice(active)
        k = 1 if rng.random() < 0.7 else 2
        body = " ".join(s.format(x=subject) for s in rng.sample(COMMENT_SENTENCES, k))
        score = rng.randint(-3, 40) if rng.random() < 0.9 else rng.randint(41, 600)
        conn.execute(
            "INSERT INTO comments (id, post_id, parent_id, user_id, body, created, score)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (cid, pid, parent, user, body, fmt(created), score),
        )
        thread.append((cid, depth, created))

    # votes: marvin voted on a few posts; other users on many ----------------------
    votes = set()
    for pid in rng.sample(range(1, len(posts) + 1), 12):
        votes.add((marvin, pid, 1 if rng.random() < 0.8 else -1))
    for _ in range(1200):
        votes.add(
            (rng.choice(active), rng.randint(1, len(posts)), 1 if rng.random() < 0.85 else -1)
        )
    seen: set[tuple[int, int]] = set()
    for user, pid, value in sorted(votes):
        if (user, pid) not in seen:
            seen.add((user, pid))
            conn.execute("INSERT INTO post_votes VALUES (?, ?, ?)", (user, pid, value))

    conn.execute(
        "UPDATE users SET karma = "
        "COALESCE((SELECT SUM(score) FROM posts WHERE user_id = users.id), 0) + "
        "COALESCE((SELECT SUM(score) FROM comments WHERE user_id = users.id), 0)"
    )
