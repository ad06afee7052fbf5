package queue

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// safety bounds every blocking step: a lost wake-up fails the test instead of hanging it.
const safety = 30 * time.Second

// Many producers, one consumer on Take + Wake: every item arrives once, each producer's in order,
// and no wake-up is lost (the consumer would sleep forever on the last items).
func TestTakeDeliversEverythingInOrder(t *testing.T) {
	const producers, each = 8, 5000
	var q Q[[2]int] // the zero value
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if !q.Push([2]int{p, i}) {
					t.Error("push refused on an open queue")
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); q.Close(nil) }()
	next := make([]int, producers)
	deadline := time.After(safety)
	for {
		items, closed := q.Take()
		for _, it := range items {
			if it[1] != next[it[0]] {
				t.Fatalf("producer %d: got item %d, want %d", it[0], it[1], next[it[0]])
			}
			next[it[0]]++
		}
		if closed {
			break
		}
		if len(items) > 0 {
			continue
		}
		select {
		case <-q.Wake():
		case <-deadline:
			t.Fatalf("consumer starved: got %v", next)
		}
	}
	for p, n := range next {
		if n != each {
			t.Fatalf("producer %d: %d of %d items arrived", p, n, each)
		}
	}
	if q.Push([2]int{}) {
		t.Fatal("push accepted after Close")
	}
}

// Next hands out one item at a time; after Close the queued items still come, then the error.
func TestNextThenCloseError(t *testing.T) {
	q := New[int]()
	ctx, cancel := context.WithTimeout(context.Background(), safety)
	defer cancel()
	done := make(chan []int)
	boom := errors.New("connection ended")
	go func() {
		var got []int
		for {
			v, err := q.Next(ctx)
			if err != nil {
				if !errors.Is(err, boom) {
					t.Errorf("Next error %v, want the close's", err)
				}
				done <- got
				return
			}
			got = append(got, v)
		}
	}()
	for i := range 100 {
		q.Push(i)
	}
	q.Close(boom)
	q.Close(errors.New("second close")) // the first reason stays
	got := <-done
	if len(got) != 100 || got[0] != 0 || got[99] != 99 {
		t.Fatalf("got %d items: %v", len(got), got)
	}
	if !errors.Is(q.Err(), boom) || !q.Closed() {
		t.Fatalf("Err %v Closed %v", q.Err(), q.Closed())
	}
	var z Q[int]
	z.Close(nil)
	if _, err := z.Next(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("Next of a queue closed without a reason: %v", err)
	}
}

// Next gives up when its context ends, and the queue stays usable.
func TestNextHonoursTheContext(t *testing.T) {
	q := New[string]()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() {
		_, err := q.Next(ctx)
		errc <- err
	}()
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Next after cancel: %v", err)
		}
	case <-time.After(safety):
		t.Fatal("Next ignored its context")
	}
	q.Push("x")
	ctx2, cancel2 := context.WithTimeout(context.Background(), safety)
	defer cancel2()
	if v, err := q.Next(ctx2); v != "x" || err != nil {
		t.Fatalf("Next after a canceled Next: %q %v", v, err)
	}
}

// PushMax: a consumer that stopped reading loses its queue, which closes with the reason, rather
// than the queue growing without bound.
func TestPushMaxClosesOnOverflow(t *testing.T) {
	q := New[int]()
	over := errors.New("fell behind")
	for i := range 3 {
		if !q.PushMax(i, 3, over) {
			t.Fatalf("push %d refused under the limit", i)
		}
	}
	if q.PushMax(3, 3, over) {
		t.Fatal("push over the limit accepted")
	}
	items, closed := q.Take()
	if len(items) != 0 || !closed || !errors.Is(q.Err(), over) {
		t.Fatalf("after overflow: %v closed=%v err=%v", items, closed, q.Err())
	}
	if q.Push(9) {
		t.Fatal("push accepted after overflow")
	}
}

// Update and TakeWith change and read other state under the queue's lock: a counter of work still
// to come (the runtime loop's reservations) moves together with the queue, so the consumer never
// sees "nothing pending, nothing queued" while an item is on its way.
func TestUpdateMovesStateWithTheQueue(t *testing.T) {
	for range 200 {
		var q Q[int]
		pending := 0
		const n = 16
		q.Update(func(items []int) ([]int, bool) { pending += n; return items, false })
		for i := range n {
			go q.Update(func(items []int) ([]int, bool) { pending--; return append(items, i), false })
		}
		got := 0
		deadline := time.After(safety)
		for {
			var p int
			items, _ := q.TakeWith(func() { p = pending })
			got += len(items)
			if p == 0 && len(items) == 0 {
				break
			}
			if len(items) > 0 {
				continue
			}
			select {
			case <-q.Wake():
			case <-deadline:
				t.Fatal("consumer starved")
			}
		}
		if got != n {
			t.Fatalf("the consumer stopped with %d of %d items taken", got, n)
		}
	}
	// Update can close the queue after the items it keeps, and is refused after that.
	q := New[string]()
	q.Update(func(items []string) ([]string, bool) { return append(items[:0], "last"), true })
	if items, closed := q.Take(); len(items) != 1 || items[0] != "last" || !closed {
		t.Fatalf("update-close: %v %v", items, closed)
	}
	called := false
	if q.Update(func(items []string) ([]string, bool) { called = true; return items, false }) || called {
		t.Fatal("Update ran on a closed queue")
	}
	if q.Len() != 0 {
		t.Fatalf("Len %d", q.Len())
	}
}
