"""Export and import: Kybernesis zips, Obsidian vaults and other sources, their jobs, API, pages and commands."""
