//go:build !cgo

package ledger

// failureOf: without cgo there is no SQLite, so no SQLite error to sort (Open fails first with
// buildcgo.Err).
func failureOf(error) failure { return failureOther }
