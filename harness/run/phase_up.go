package run

import (
	"context"
	"database/sql"
	"log/slog"
)

// upPhase brings the target up (or connects to it). What it started is in s.sys even when it fails, so
// cleanup tears it down.
func upPhase(ctx context.Context, s *state, log *slog.Logger) error {
	s.sys = &system{direct: map[string]*sql.DB{}}
	return s.target.up(ctx, s, log, s.sys)
}
