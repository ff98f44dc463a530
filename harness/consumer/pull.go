package consumer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/seqgate/seqgate/internal/sleep"
	"github.com/seqgate/seqgate/ledger"
)

// A pull consumer (seed 003) polls GET /v1/events/changes?since=<checkpoint>&limit=<page> and keeps
// its checkpoint (next_since) across polls, pods and failures. Its observations are the ledger
// records of a stream's, so the verifier judges both kinds by the same definitions:
//   - a page's write-like event is an `ev`; a structural op (rename, delete, mkdir, copy) is a
//     `reset` with reason structural_change, its path and op, as a stream would send it;
//   - a 410 is a `reset` with reason seq_too_old whose seq is where the checkpoint moves (the
//     answer's next_since, the oldest retained seq - 1): the consumer resyncs and resumes there;
//   - a "connection" is a run of successful polls against one endpoint: `conn` open at its first
//     answered poll, close when a poll fails (or the consumer is disconnected), fail when no poll
//     against it was answered; every `conn` (and the `consumer` summary) carries kind: pull.

// KindPull is the ledger's kind field on a pull consumer's conn and consumer records.
const KindPull = "pull"

// maxPageBytes bounds one answer's body: 1,000 events of 1 KB paths fit many times over; a
// target answering more is broken or hostile, and the poll fails.
const maxPageBytes = 16 << 20

// pullPage is an answer of the pull endpoint: a page (200) or a compaction (410).
type pullPage struct {
	Events []struct {
		Seq   *int64 `json:"seq"`
		Path  string `json:"path"`
		Op    string `json:"op"`
		Batch string `json:"batch"`
	} `json:"events"`
	NextSince *int64 `json:"next_since"`
	HasMore   bool   `json:"has_more"`
	OldestSeq *int64 `json:"oldest_seq"`
}

// KindPullThenStream is the consumer summary's kind field on a pull-then-stream consumer (its
// pulls' conn records carry kind pull, its streams' none).
const KindPullThenStream = "pull-then-stream"

func (c *Consumer) kind() string {
	switch {
	case c.cfg.Pull:
		return KindPull
	case c.cfg.PullFirst:
		return KindPullThenStream
	}
	return ""
}

// runPull polls until ctx is done, failing over to the next endpoint when one does not answer.
func (c *Consumer) runPull(ctx context.Context) {
	c.mu.Lock()
	c.firstSince = c.cursor.Load() // 0, or the saved checkpoint (Resume)
	c.mu.Unlock()
	c.reconnect(ctx, func(ep Endpoint, conn string, _ int) session {
		opened, _ := c.pollConn(ctx, ep, conn, false)
		return session{opened: opened, progressed: opened} // an answered poll is progress
	})
}

// runPullThenStream alternates a pull up to the head (on connection <name>.<n>.pull, kind pull)
// with a stream from the pull's cursor (on <name>.<n>), until ctx is done. A pull that fails
// before the head is tried again, on the next endpoint when this one did not answer.
func (c *Consumer) runPullThenStream(ctx context.Context) {
	c.mu.Lock()
	c.firstSince = c.cursor.Load()
	c.mu.Unlock()
	c.needPull.Store(true)
	c.reconnect(ctx, func(ep Endpoint, conn string, _ int) session {
		if c.needPull.Load() {
			opened, head := c.pollConn(ctx, ep, conn+".pull", true)
			if !head {
				return session{opened: opened}
			}
			c.needPull.Store(false)
		}
		opened, frames, now, _ := c.connect(ctx, ep, conn, false)
		return session{opened: opened, progressed: frames > 0, now: now}
	})
}

// pollConn polls one endpoint until a poll fails or the consumer is disconnected (or, with
// untilHead, until a page says there is no more); it reports whether any poll was answered and
// whether it reached the head.
func (c *Consumer) pollConn(ctx context.Context, ep Endpoint, conn string, untilHead bool) (opened, head bool) {
	cctx, _, release := c.session(ctx)
	defer release()
	rec := &ledger.Record{K: ledger.KindConn, Consumer: c.cfg.Name, Tenant: c.cfg.Tenant, Conn: conn, Pod: ep.Name,
		Since: c.cursor.Load(), Kind: KindPull}
	var err error
	for {
		var pg pullPage
		var gone bool
		if pg, gone, err = c.poll(cctx, ep); err != nil {
			err = cause(cctx, err)
			break
		}
		if !opened {
			opened = true
			open := *rec
			open.Phase, open.T = "open", c.now()
			_ = c.cfg.Sink.Write(&open)
		}
		c.frames.Add(1)
		if gone {
			seq := c.compacted(pg, conn)
			if c.wantsResync("seq_too_old") {
				c.resync(ctx, ep, conn, seq, "seq_too_old")
			}
			continue // resume at once from the oldest retained row
		}
		if err = c.deliver(cctx, pg, conn, ep); err != nil {
			break
		}
		if untilHead && (!pg.HasMore || len(pg.Events) == 0) {
			head = true
			break
		}
		if !pg.HasMore || len(pg.Events) == 0 {
			if !sleep.For(cctx, c.cfg.PollInterval) {
				err = cause(cctx, cctx.Err())
				break
			}
		}
	}
	if !opened {
		c.fail(rec, err)
		return false, false
	}
	cl := *rec
	cl.Phase, cl.T = "close", c.now()
	cl.FinalCursor = c.cursor.Load() // the checkpoint the service's answers left: a cursor it gave
	if ctx.Err() == nil && err != nil {
		cl.Err = err.Error()
	}
	_ = c.cfg.Sink.Write(&cl)
	return true, head
}

// poll asks for one page after the checkpoint, bounded by the idle timeout.
func (c *Consumer) poll(ctx context.Context, ep Endpoint) (pullPage, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.IdleTimeout)
	defer cancel()
	since := c.cursor.Load()
	url := c.wire().PullURL(ep.URL, since, c.cfg.PageSize)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		panic(err) // our own URL
	}
	req.Header.Set("Authorization", "Bearer "+c.cfg.Key)
	resp, err := c.cfg.Client.Do(req)
	if err != nil {
		return pullPage{}, false, err
	}
	defer resp.Body.Close()
	return decodePage(resp.StatusCode, resp.Body)
}

// decodePage reads one answer of the pull endpoint: a page (200, every event with a seq) or a
// compaction (410, with next_since or oldest_seq); anything else is an error naming what is wrong.
// The body is read up to maxPageBytes.
func decodePage(status int, body io.Reader) (pullPage, bool, error) {
	if status != http.StatusOK && status != http.StatusGone {
		return pullPage{}, false, fmt.Errorf("HTTP %d", status)
	}
	var pg pullPage
	if err := json.NewDecoder(io.LimitReader(body, maxPageBytes)).Decode(&pg); err != nil {
		return pullPage{}, false, fmt.Errorf("HTTP %d: body: %w", status, err)
	}
	if status == http.StatusGone {
		switch {
		case pg.NextSince != nil:
		case pg.OldestSeq != nil:
			n := *pg.OldestSeq - 1
			pg.NextSince = &n
		default:
			return pullPage{}, false, errors.New("HTTP 410 without next_since or oldest_seq")
		}
		return pg, true, nil
	}
	for i, e := range pg.Events {
		if e.Seq == nil {
			return pullPage{}, false, fmt.Errorf("HTTP 200: events[%d] has no seq", i)
		}
	}
	return pg, false, nil
}

// compacted records a 410 as reset(seq_too_old), moves the checkpoint past the swept rows and
// returns the reset's seq.
func (c *Consumer) compacted(pg pullPage, conn string) int64 {
	c.resets.Add(1)
	seq := *pg.NextSince
	_ = c.cfg.Sink.Write(&ledger.Record{K: ledger.KindReset, Consumer: c.cfg.Name, Tenant: c.cfg.Tenant, Conn: conn,
		T: c.now(), Seq: seq, Reason: "seq_too_old"})
	c.advance(seq)
	return seq
}

// deliver records a page's events in order and moves the checkpoint to next_since.
func (c *Consumer) deliver(ctx context.Context, pg pullPage, conn string, ep Endpoint) error {
	pod := ep.Name
	for _, e := range pg.Events {
		seq := *e.Seq
		t := c.now()
		if ledger.IsStructural(e.Op) {
			c.resets.Add(1)
			_ = c.cfg.Sink.Write(&ledger.Record{K: ledger.KindReset, Consumer: c.cfg.Name, Tenant: c.cfg.Tenant, Conn: conn,
				T: t, Seq: seq, Reason: "structural_change", Path: e.Path, Op: e.Op})
			if c.wantsResync("structural_change") {
				c.resync(ctx, ep, conn, seq, "structural_change")
			}
		} else {
			c.events.Add(1)
			_ = c.cfg.Sink.Write(&ledger.Record{K: ledger.KindEv, Consumer: c.cfg.Name, Tenant: c.cfg.Tenant, Conn: conn,
				T: t, Seq: seq, Op: e.Op, Path: e.Path, Pod: pod, Batch: e.Batch})
		}
		c.advance(seq)
		if d := time.Duration(c.readDelay.Load()); d > 0 && !sleep.For(ctx, d) {
			return cause(ctx, ctx.Err())
		}
	}
	if pg.NextSince != nil {
		c.advance(*pg.NextSince)
	}
	return nil
}

// advance raises the checkpoint to seq (never lowers it).
func (c *Consumer) advance(seq int64) {
	for {
		cur := c.cursor.Load()
		if seq <= cur || c.cursor.CompareAndSwap(cur, seq) {
			return
		}
	}
}
