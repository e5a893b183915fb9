"""The code site's seed vocabulary: people, groups, projects, and the sentence
templates that commits, issues, merge requests and comments are made from.

Plain constants only; `data.py` turns them into rows with one seeded RNG.
Names are chosen so that no project name, module name or label is a substring
of another (task lookups and page checks rely on that; a test checks it).
"""

from __future__ import annotations

FIRST_NAMES = [
    "Mira", "Leo", "Ana", "Tomas", "Priya", "Jonas", "Keiko", "Omar", "Lena", "Marco",
    "Sofia", "Dmitri", "Aisha", "Felix", "Ingrid", "Rafael", "Yuki", "Nadia", "Elias", "Chloe",
    "Tariq", "Hannah", "Mateo", "Freya", "Kwame", "Lucia", "Arjun", "Greta", "Bruno", "Zara",
    "Henrik", "Amara", "Pablo", "Vera", "Samir", "Olga", "Dario", "Maya", "Nils", "Rosa",
]  # fmt: skip
LAST_NAMES = [
    "Kovacs", "Park", "Silva", "Novak", "Raman", "Berg", "Tanaka", "Haddad", "Fischer", "Rossi",
    "Moreau", "Ivanov", "Okafor", "Weber", "Lund", "Costa", "Sato", "Petrova", "Lindqvist",
    "Dubois", "Rahman", "Schmidt", "Garcia", "Nilsen", "Mensah", "Romero", "Mehta", "Vogel",
    "Santos", "Quinn", "Holm", "Adeyemi", "Ortiz", "Horvat", "Karimi", "Sokolova", "Conti",
    "Ferreira", "Ekström", "Navarro",
]  # fmt: skip
BIOS = [
    "Backend developer who likes boring, reliable systems.",
    "Frontend engineer. Accessibility matters.",
    "Data engineer, occasional SQL poet.",
    "Working on maps and routing in my spare time.",
    "SRE. I automate things so I can sleep at night.",
    "Embedded developer, soldering iron always warm.",
    "Open source maintainer and coffee enthusiast.",
    "Student learning Rust and Go.",
    "Technical writer turned developer.",
    "Security researcher; please report bugs privately.",
    "I review pull requests faster than I write them.",
    "Game developer by night, web developer by day.",
]
BYTE_NAME = "Byte Blaze"
BYTE_BIO = "Developer, tinkerer and maintainer of far too many side projects."

# (group path, display name)
GROUPS = [
    ("orbitlabs", "Orbit Labs"), ("greenfield", "Greenfield"), ("datacraft", "DataCraft"),
    ("openmaps", "OpenMaps Collective"), ("northwind", "Northwind"), ("kitestack", "Kitestack"),
    ("bluepeak", "Blue Peak"), ("tinkerhub", "TinkerHub"),
]  # fmt: skip

# (namespace, name, language, description, topics); a namespace that is not a
# group is a personal namespace ("byte", or "~N" = the N-th generated user).
PROJECTS = [
    ("orbitlabs", "pixel-forge", "rust", "A tiny raster graphics editor with layers and undo history.", "rust, graphics"),
    ("orbitlabs", "starlink-sim", "python", "Orbital mechanics simulator for satellite constellations.", "python, simulation, space"),
    ("orbitlabs", "telemetry-hub", "go", "Collects and stores spacecraft telemetry streams.", "go, telemetry"),
    ("orbitlabs", "mission-planner", "javascript", "Web app for planning observation windows.", "javascript, planning, space"),
    ("greenfield", "harvest-api", "python", "REST API for farm yield records.", "python, api, agriculture"),
    ("greenfield", "soil-monitor", "rust", "Firmware for soil moisture sensors.", "rust, embedded, agriculture"),
    ("greenfield", "crop-dashboard", "javascript", "Charts of crop growth and irrigation.", "javascript, dashboard"),
    ("greenfield", "weather-ingest", "go", "Pulls weather forecasts into the farm database.", "go, weather"),
    ("datacraft", "parquet-lens", "rust", "Command-line viewer for Parquet files.", "rust, data, cli"),
    ("datacraft", "etl-flow", "python", "Lightweight ETL pipelines defined in YAML.", "python, data, etl"),
    ("datacraft", "sql-prettifier", "javascript", "Formats SQL queries in the browser and in the terminal.", "javascript, sql"),
    ("datacraft", "schema-guard", "python", "Validates JSON records against evolving schemas.", "python, data, validation"),
    ("datacraft", "lakehouse-docs", "docs", "Documentation for the DataCraft lakehouse platform.", "documentation, data"),
    ("openmaps", "tile-server", "go", "Serves vector map tiles from PostGIS.", "go, maps, gis"),
    ("openmaps", "geocoder-lite", "python", "Offline geocoding with a small footprint.", "python, maps, gis"),
    ("openmaps", "route-finder", "rust", "Shortest-path routing on OpenStreetMap extracts.", "rust, maps, routing"),
    ("openmaps", "map-style-kit", "javascript", "Reusable styles for web maps.", "javascript, maps, css"),
    ("northwind", "invoice-engine", "python", "Generates and sends invoices for Northwind customers.", "python, billing"),
    ("northwind", "storefront-web", "javascript", "The Northwind online store frontend.", "javascript, ecommerce"),
    ("northwind", "inventory-sync", "go", "Keeps warehouse stock in sync across regions.", "go, ecommerce"),
    ("northwind", "payments-gateway", "go", "Payment provider integrations behind one API.", "go, billing, api"),
    ("kitestack", "kite-cli", "go", "Command-line client for the Kitestack platform.", "go, cli"),
    ("kitestack", "kite-widgets", "javascript", "Component library for Kitestack dashboards.", "javascript, components"),
    ("kitestack", "deploy-bot", "python", "Chat bot that runs deployments on request.", "python, devops, chatops"),
    ("kitestack", "helm-charts", "docs", "Helm charts and runbooks for Kitestack services.", "kubernetes, devops"),
    ("bluepeak", "trail-log", "javascript", "Mobile-friendly hiking journal.", "javascript, outdoors"),
    ("bluepeak", "summit-finder", "python", "Finds the summits visible from any point.", "python, maps, outdoors"),
    ("bluepeak", "avalanche-watch", "python", "Aggregates avalanche bulletins into one feed.", "python, outdoors, alerts"),
    ("tinkerhub", "synth-engine", "rust", "Modular software synthesizer.", "rust, audio"),
    ("tinkerhub", "led-matrix", "python", "Drive LED matrices from a Raspberry Pi.", "python, hardware"),
    ("tinkerhub", "home-automation", "python", "Rules engine for smart home devices.", "python, iot"),
    ("tinkerhub", "workshop-notes", "docs", "Notes and slides from TinkerHub workshops.", "documentation, education"),
    ("byte", "dotfiles", "docs", "My shell, editor and terminal configuration.", "dotfiles, shell"),
    ("byte", "advent-solutions", "python", "Solutions to Advent of Code puzzles.", "python, puzzles"),
    ("byte", "rss-digest", "go", "Sends a daily email digest of RSS feeds.", "go, rss, email"),
    ("byte", "tiny-http", "rust", "A minimal HTTP/1.1 server for learning.", "rust, http, learning"),
    ("~0", "chess-engine", "rust", "A UCI chess engine with alpha-beta search.", "rust, chess"),
    ("~1", "recipe-box", "javascript", "Save and share family recipes.", "javascript, food"),
    ("~2", "budget-tracker", "python", "Track monthly spending from bank CSV exports.", "python, finance"),
    ("~3", "markdown-slides", "javascript", "Turn Markdown files into slide decks.", "javascript, markdown"),
    ("~4", "photo-sorter", "python", "Sorts photos into folders by date and place.", "python, photos"),
    ("~5", "pomodoro-timer", "javascript", "A focus timer for the terminal and the browser.", "javascript, productivity"),
    ("~6", "git-stats", "go", "Statistics about a Git repository's history.", "go, git"),
    ("~7", "ascii-canvas", "python", "Draw pictures with text characters.", "python, art"),
]  # fmt: skip
PRIVATE = {
    "payments-gateway",
    "helm-charts",
    "deploy-bot",
    "avalanche-watch",
    "budget-tracker",
    "dotfiles",
}
INTERNAL = {"lakehouse-docs", "inventory-sync", "workshop-notes", "soil-monitor", "kite-widgets"}

# byte's memberships in projects outside its own namespace
BYTE_ROLES = {
    "pixel-forge": "Maintainer", "etl-flow": "Maintainer", "tile-server": "Maintainer",
    "deploy-bot": "Maintainer", "trail-log": "Maintainer",
    "starlink-sim": "Developer", "harvest-api": "Developer", "geocoder-lite": "Developer",
    "invoice-engine": "Developer", "helm-charts": "Developer", "synth-engine": "Developer",
    "schema-guard": "Reporter", "kite-cli": "Reporter", "route-finder": "Reporter",
    "storefront-web": "Guest", "led-matrix": "Guest",
}  # fmt: skip
BYTE_STARS = ["pixel-forge", "etl-flow", "route-finder", "synth-engine", "kite-cli", "tiny-http",
              "map-style-kit", "chess-engine"]  # fmt: skip

ROLES = ["Guest", "Reporter", "Developer", "Maintainer", "Owner"]  # low to high
ROLE_LEVEL = {r: i for i, r in enumerate(ROLES)}

# module names per language: file names, issue and commit subjects
MODULES = {
    "python": ["parser", "config", "cache", "scheduler", "exporter", "storage", "auth", "metrics",
               "notifier", "loader", "validator", "geometry"],
    "javascript": ["router", "store", "theme", "toolbar", "charts", "forms", "api", "sidebar",
                   "search", "modal", "i18n", "upload"],
    "go": ["handler", "worker", "queue", "client", "registry", "poller", "logger", "limiter",
           "encoder", "session", "tracer", "watcher"],
    "rust": ["lexer", "render", "buffer", "codec", "engine", "graph", "allocator", "shader",
             "sampler", "planner", "streams", "layout"],
    "docs": ["install", "upgrade", "backup", "monitoring", "networking", "glossary", "faq",
             "onboarding", "security", "releases", "tutorial", "reference"],
}  # fmt: skip

LABELS = ["bug", "feature", "documentation", "performance", "security", "question",
          "good first issue", "help wanted", "regression", "testing", "design", "infrastructure"]  # fmt: skip

# (label, title template); {m} is a module name
ISSUE_TEMPLATES = [
    ("bug", "Crash when {m} receives an empty file"), ("bug", "The {m} ignores the timeout setting"),
    ("bug", "Wrong error message from {m}"), ("bug", "Unicode names break {m}"),
    ("bug", "Memory leak in {m} after long runs"), ("regression", "Regression: {m} slower since the last release"),
    ("regression", "Regression: {m} output changed in 2.0"), ("feature", "Support YAML input in {m}"),
    ("feature", "Add a dry-run flag to {m}"), ("feature", "Allow custom themes for {m}"),
    ("feature", "Export {m} results as CSV"), ("feature", "Show progress while {m} runs"),
    ("documentation", "Document the {m} configuration options"),
    ("documentation", "Add examples for {m} to the README"), ("documentation", "Broken links in the {m} guide"),
    ("question", "How do I configure {m} for production?"), ("question", "Is {m} safe to use from several threads?"),
    ("testing", "Increase test coverage of {m}"), ("testing", "Flaky {m} tests on CI"),
    ("performance", "Speed up {m} on large inputs"), ("performance", "Reduce the startup time of {m}"),
    ("security", "Validate user-supplied paths in {m}"), ("security", "Upgrade the vulnerable dependency used by {m}"),
    ("design", "Redesign the {m} settings screen"), ("design", "Improve contrast of the {m} buttons"),
    ("infrastructure", "Move {m} builds to the new runners"), ("infrastructure", "Cache {m} dependencies in CI"),
]  # fmt: skip
ISSUE_SENTENCES = [
    "Steps to reproduce are in the first comment.",
    "This started after we upgraded the dependencies.",
    "I can reproduce it on Linux and macOS.",
    "It would save us a lot of manual work.",
    "Happy to send a merge request if someone points me in the right direction.",
    "Several users asked about this on the forum.",
    "The logs do not show anything useful.",
    "We should decide on this before the next release.",
    "A minimal example is attached below.",
    "Low priority, but it keeps coming up.",
]
NOTE_SENTENCES = [
    "I can reproduce this on the main branch.",
    "Thanks for the report, looking into it.",
    "Could you share the full stack trace?",
    "This should be fixed by the latest merge request.",
    "Same problem here with the current release.",
    "Moving this to the next milestone.",
    "I think this is a duplicate, but I could not find the original.",
    "Confirmed, the fix is straightforward.",
    "Can we add a test for this case?",
    "Works for me after clearing the cache.",
    "Good idea, I would like to see this too.",
    "Closing as the fix has been released.",
    "Please check the contributing guide first.",
    "LGTM, thanks!",
]
# (branch prefix, title template)
MR_TEMPLATES = [
    ("fix", "Fix error handling in {m}"), ("fix", "Fix race condition in {m}"),
    ("feature", "Add caching to {m}"), ("feature", "Add configuration file support to {m}"),
    ("refactor", "Refactor {m} into smaller functions"), ("docs", "Improve the {m} documentation"),
    ("test", "Add integration tests for {m}"), ("perf", "Make {m} faster with batching"),
    ("feature", "Add logging to {m}"), ("fix", "Handle missing values in {m}"),
]  # fmt: skip
MR_SENTENCES = [
    "This closes the related issue.",
    "Tested locally with the sample data.",
    "Please review the API changes carefully.",
    "No behaviour change intended.",
    "Follows the discussion in the last planning meeting.",
    "Includes a changelog entry.",
]
COMMIT_TEMPLATES = [
    "Add {m} module", "Fix off-by-one error in {m}", "Refactor {m} for readability",
    "Add tests for {m}", "Handle empty input in {m}", "Improve error messages in {m}",
    "Speed up {m} with a lookup table", "Document {m} options", "Fix flaky test in {m}",
    "Remove dead code from {m}", "Rename helpers in {m}", "Log warnings from {m}",
    "Validate arguments passed to {m}", "Simplify {m} control flow",
]  # fmt: skip
COMMIT_GENERIC = [
    "Update README", "Update dependencies", "Fix typos in docs", "Add CI configuration",
    "Bump version to {v}", "Tidy up formatting", "Update license year", "Pin build tool versions",
]  # fmt: skip
