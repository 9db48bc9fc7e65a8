-- Tenants (toolscout 0.x, issue 39): several teams on one catalog.

-- One row a tenant, removed ones too (their ids are never reused). `record` is what the
-- flat store keeps in tenants.json for it: name, limits, times and its tokens, each a
-- SHA-256 digest of the token's text (never the text).
CREATE TABLE tenants (
    id          uuid PRIMARY KEY,
    name        text NOT NULL,
    removed_at  timestamptz,
    record      json NOT NULL,
    -- The generation that last wrote the row.
    generation  bigint NOT NULL
);
-- A live tenant's name is unique; a removed one's may be taken again.
CREATE UNIQUE INDEX tenants_live_name ON tenants (name) WHERE removed_at IS NULL;

-- Who owns a bundle (NULL: the operator) and whether every tenant may read and call it.
ALTER TABLE bundles ADD COLUMN owner_tenant_id uuid REFERENCES tenants (id);
ALTER TABLE bundles ADD COLUMN shared boolean NOT NULL DEFAULT false;
-- A tenant's live bundles have distinct slugs. (The operator's are checked by the
-- catalog only: catalogs written before may hold duplicates.)
CREATE UNIQUE INDEX bundles_tenant_slug ON bundles (owner_tenant_id, slug)
    WHERE soft_deleted_at IS NULL AND owner_tenant_id IS NOT NULL;
