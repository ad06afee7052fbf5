//go:build cgo

package ledger

import (
	"database/sql"
	"errors"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// The driver is mattn/go-sqlite3 under a name of its own, whose every connection carries
// connPragmas (the settings the DSN cannot carry). Built without cgo the driver is a stub; Open
// then says so first (internal/buildcgo) and nothing is registered here.
func init() {
	sql.Register(driverName, &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
		_, err := c.Exec(connPragmas, nil)
		return err
	}})
}

// failureOf sorts a SQLite error by the primary result code the driver gives it.
func failureOf(err error) failure {
	var se sqlite3.Error
	if !errors.As(err, &se) {
		return failureOther
	}
	switch se.Code {
	case sqlite3.ErrNotADB, sqlite3.ErrCorrupt:
		return failureDamaged
	case sqlite3.ErrBusy, sqlite3.ErrLocked:
		return failureLocked
	case sqlite3.ErrFull:
		return failureFull
	case sqlite3.ErrReadonly, sqlite3.ErrCantOpen, sqlite3.ErrPerm, sqlite3.ErrAuth:
		return failureReadOnly
	case sqlite3.ErrIoErr:
		return failureIO
	}
	return failureOther
}
