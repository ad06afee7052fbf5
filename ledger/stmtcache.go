package ledger

import (
	"container/list"
	"context"
	"database/sql/driver"
	"errors"
	"strings"
	"sync"
)

// A per-connection cache of prepared statements. modernc.org/sqlite prepares and finalizes a
// statement on every Exec and Query that does not go through a *sql.Stmt; mattn/go-sqlite3 kept
// the last 64 per connection (_stmt_cache_size). The store's statements are a few dozen fixed
// texts run again and again, so parsing and planning each one every time is a cost paid on every
// write and every read. cachingDriver wraps the real driver: Exec and Query on a connection take
// the statement for their text from the connection's cache (preparing it on a miss), run it, and
// give it back — for a query, once its rows are closed. A statement in use is out of the cache, so
// the same text run again while its rows are still open (a query inside a loop over the same
// query) gets a statement of its own. A statement that failed is finalized, not kept. Texts of
// more than one statement (a ';' in them) are never cached: the driver re-parses those anyway.

const stmtCacheSize = 64

type cachingDriver struct {
	inner driver.Driver
	size  int
}

func (d *cachingDriver) Open(name string) (driver.Conn, error) {
	c, err := d.inner.Open(name)
	if err != nil {
		return nil, err
	}
	for _, ok := range []bool{
		implements[driver.ConnBeginTx](c), implements[driver.ConnPrepareContext](c),
		implements[driver.ExecerContext](c), implements[driver.QueryerContext](c),
		implements[driver.Pinger](c), implements[driver.SessionResetter](c), implements[driver.Validator](c),
	} {
		if !ok {
			c.Close()
			return nil, errors.New("ledger: the sqlite driver's connection lacks a method the statement cache relies on (a driver upgrade changed it: see ledger/stmtcache.go)")
		}
	}
	return &cachingConn{Conn: c, size: d.size, byText: map[string]*list.Element{}}, nil
}

func implements[T any](c driver.Conn) bool {
	_, ok := c.(T)
	return ok
}

type cachedStmt struct {
	text string
	st   driver.Stmt
}

type cachingConn struct {
	driver.Conn
	size int

	mu     sync.Mutex
	lru    list.List                // of *cachedStmt, most recently returned first; only idle ones
	byText map[string]*list.Element // into lru
}

// take returns an idle prepared statement for text, or prepares one.
func (c *cachingConn) take(ctx context.Context, text string) (driver.Stmt, error) {
	c.mu.Lock()
	if e, ok := c.byText[text]; ok {
		delete(c.byText, text)
		c.lru.Remove(e)
		c.mu.Unlock()
		return e.Value.(*cachedStmt).st, nil
	}
	c.mu.Unlock()
	return c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, text)
}

// give puts st back into the cache after use (ok) or finalizes it (a failure, a text of several
// statements, the same text already cached), evicting the least recently used past the size.
func (c *cachingConn) give(text string, st driver.Stmt, ok bool) {
	if !ok || strings.Contains(text, ";") {
		st.Close()
		return
	}
	c.mu.Lock()
	if _, dup := c.byText[text]; dup {
		c.mu.Unlock()
		st.Close()
		return
	}
	c.byText[text] = c.lru.PushFront(&cachedStmt{text: text, st: st})
	var evicted []driver.Stmt
	for c.lru.Len() > c.size {
		old := c.lru.Remove(c.lru.Back()).(*cachedStmt)
		delete(c.byText, old.text)
		evicted = append(evicted, old.st)
	}
	c.mu.Unlock()
	for _, st := range evicted {
		st.Close()
	}
}

func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	st, err := c.take(ctx, query)
	if err != nil {
		return nil, err
	}
	res, err := st.(driver.StmtExecContext).ExecContext(ctx, args)
	c.give(query, st, err == nil)
	return res, err
}

func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	st, err := c.take(ctx, query)
	if err != nil {
		return nil, err
	}
	rows, err := st.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		c.give(query, st, false)
		return nil, err
	}
	return &cachingRows{Rows: rows, c: c, text: query, st: st}, nil
}

// Close finalizes the cached statements, then closes the connection.
func (c *cachingConn) Close() error {
	c.mu.Lock()
	var errs []error
	for e := c.lru.Front(); e != nil; e = e.Next() {
		errs = append(errs, e.Value.(*cachedStmt).st.Close())
	}
	c.lru.Init()
	clear(c.byText)
	c.mu.Unlock()
	return errors.Join(append(errs, c.Conn.Close())...)
}

// The rest passes through to the driver's connection (Prepare: a statement the caller owns).

func (c *cachingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (c *cachingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
}

func (c *cachingConn) Ping(ctx context.Context) error { return c.Conn.(driver.Pinger).Ping(ctx) }

func (c *cachingConn) ResetSession(ctx context.Context) error {
	return c.Conn.(driver.SessionResetter).ResetSession(ctx)
}

func (c *cachingConn) IsValid() bool { return c.Conn.(driver.Validator).IsValid() }

// cachingRows gives its statement back to the cache when closed.
type cachingRows struct {
	driver.Rows
	c      *cachingConn
	text   string
	st     driver.Stmt
	closed bool
}

func (r *cachingRows) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	err := r.Rows.Close() // resets the statement (the driver keeps a prepared statement's handle)
	r.c.give(r.text, r.st, err == nil)
	return err
}
