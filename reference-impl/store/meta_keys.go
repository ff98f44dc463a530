package store

import (
	"context"
	"strings"
)

// ActiveKeys returns, for those of keyHashes that belong to an active tenant, that tenant (one
// query per 500 hashes). A hash missing from the answer is deleted or was never a key. The pod uses
// it to revalidate the keys of its open event streams in bulk.
func (m *Meta) ActiveKeys(ctx context.Context, keyHashes []string) (map[string]Tenant, error) {
	out := make(map[string]Tenant, len(keyHashes))
	for len(keyHashes) > 0 {
		batch := keyHashes[:min(500, len(keyHashes))]
		keyHashes = keyHashes[len(batch):]
		args := make([]any, len(batch))
		for i, h := range batch {
			args[i] = h
		}
		q := `SELECT api_key_hash, tenant_id, pool_id, status FROM tenants WHERE status = 'active' AND api_key_hash IN (?` +
			strings.Repeat(", ?", len(batch)-1) + `)`
		rows, err := m.DB.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var h string
			var t Tenant
			if err := rows.Scan(&h, &t.ID, &t.PoolID, &t.Status); err != nil {
				rows.Close()
				return nil, err
			}
			out[h] = t
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}
