"""The watched folder (KYBERNESIS_CONSUME_DIR): its layout on disk (folder), the loop that watches it
(watcher). What happens to one file, in the database, is memories.services.consume.

See docs/uploads.md, "The watched folder"."""
