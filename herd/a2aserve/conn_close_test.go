package a2aserve

import (
	"sync"
	"testing"
)

// TestConnCloseTwiceConcurrently: the backend's shutdown and a failing server may both close the
// connection; two closers at once must not panic (check-then-close of the stop channel did,
// "close of closed channel", when both passed the check).
func TestConnCloseTwiceConcurrently(t *testing.T) {
	for range 60000 {
		k := &conn{stop: make(chan struct{}), done: make(chan struct{})}
		close(k.done) // run has ended
		var start, wg sync.WaitGroup
		start.Add(1)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				start.Wait()
				k.close()
			}()
		}
		start.Done()
		wg.Wait()
		select {
		case <-k.stop:
		default:
			t.Fatal("close did not close stop")
		}
	}
}
