-- The catalog of toolscout in PostgreSQL (the `postgres` feature of toolscout-catalog).
-- Forward-only: a later version adds a V2__….sql; a binary refuses a database whose
-- schema is newer than it knows.

-- One row: the generation, and what is not a row of its own.
CREATE TABLE catalog_meta (
    singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    -- Moved on by every write, in the write's transaction.
    generation  bigint NOT NULL DEFAULT 0,
    -- "<generation> <uuid>": names one committed state; NULL before the first write.
    stamp       text,
    -- The enabled flags of the built-in bundles and tools (shared: they decide which
    -- tools can be called, so every replica must agree on them).
    overlay     json NOT NULL DEFAULT '{"bundles":{},"tools":{}}'
);
INSERT INTO catalog_meta DEFAULT VALUES;

CREATE TABLE bundles (
    id              uuid PRIMARY KEY,
    slug            text NOT NULL,
    display_name    text NOT NULL,
    description     text NOT NULL,
    is_enabled      boolean NOT NULL,
    soft_deleted_at timestamptz,
    created_at      timestamptz NOT NULL,
    modified_at     timestamptz NOT NULL,
    generation      bigint NOT NULL
);

-- One tool version. `file` is the tool.json the flat store writes, as `json` (kept as
-- written: `jsonb` would reorder the schema's properties); the other columns are its
-- head, so that loading never reads `file`.
CREATE TABLE tools (
    id             uuid PRIMARY KEY,
    -- RESTRICT: a bundle goes only once it holds no tool.
    bundle_id      uuid NOT NULL REFERENCES bundles (id),
    slug           text NOT NULL,
    version        text NOT NULL,
    file           json NOT NULL,
    name           text NOT NULL,
    summary        text NOT NULL,
    category       text,
    tags           text[] NOT NULL,
    tool_type      text NOT NULL,
    func           text,
    is_enabled     boolean NOT NULL,
    created_at     timestamptz NOT NULL,
    modified_at    timestamptz NOT NULL,
    digest         uuid NOT NULL,
    invalid_reason text,
    -- The generation that last wrote the row.
    generation     bigint NOT NULL,
    CONSTRAINT tools_bundle_slug_version UNIQUE (bundle_id, slug, version)
);
CREATE INDEX tools_generation ON tools (generation);
CREATE INDEX tools_bundle ON tools (bundle_id);

-- Calls counted across every process; never moves the generation.
CREATE TABLE usage (
    tool_id        uuid PRIMARY KEY REFERENCES tools (id) ON DELETE CASCADE,
    call_count     bigint NOT NULL,
    last_called_at timestamptz
);
