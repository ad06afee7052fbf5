package daemon

import (
	"hash/fnv"
	"log"
	"sync"

	"github.com/mosh-dev/mosh/ledger"
)

// ledgerWriter runs the daemon's ledger writes off the state lock. Writes of one member run in
// the order they were queued (a transition is never recorded after the close of its task, nor a
// prompt's task minted after a later transition); different members' writes run in parallel, so
// the store's group commit shares one commit between them instead of queueing every write of the
// herd behind one goroutine.
type ledgerWriter struct {
	shards []*writerShard
	logger *log.Logger
	// apply writes a run of transitions (with the task closes they cause) in one commit.
	apply func(ops []ledgerOp)
}

// ledgerOp is one state change to record, and the task it ends, if any.
type ledgerOp struct {
	member  string
	tr      ledger.Transition
	closeID string
	art     ledger.Artifact
	end     *ledger.Transition // the task's end when it is not tr's state (the process exited: failed)
}

// writerItem is a queued write: a transition (batched with its neighbours) or any other call.
type writerItem struct {
	op *ledgerOp
	fn func()
}

// writerShards: members are spread over this many ordered queues (by name hash). More shards
// than the store's group commit can usefully fill would only add goroutines.
const writerShards = 16

// shardQueueLimit bounds one queue while the database is stuck (locked by another process, a
// slow disk): past it writes are dropped with a log line instead of growing without bound. A
// member's state keeps working either way; only its history has a gap.
const shardQueueLimit = 1 << 16

type writerShard struct {
	mu      sync.Mutex
	q       []writerItem
	wake    chan struct{}
	closed  bool
	dropped int
	done    chan struct{}
}

func newLedgerWriter(logger *log.Logger, apply func([]ledgerOp)) *ledgerWriter {
	w := &ledgerWriter{logger: logger, apply: apply}
	for range writerShards {
		s := &writerShard{wake: make(chan struct{}, 1), done: make(chan struct{})}
		w.shards = append(w.shards, s)
		go w.run(s)
	}
	return w
}

func (w *ledgerWriter) shard(member string) *writerShard {
	h := fnv.New32a()
	_, _ = h.Write([]byte(member))
	return w.shards[h.Sum32()%uint32(len(w.shards))]
}

func (w *ledgerWriter) run(s *writerShard) {
	defer close(s.done)
	for {
		s.mu.Lock()
		q := s.q
		s.q = nil
		closed := s.closed
		dropped := s.dropped
		s.dropped = 0
		s.mu.Unlock()
		if dropped > 0 && w.logger != nil {
			w.logger.Printf("ledger: the database fell behind; %d queued writes were dropped (see `mosh herd doctor`)", dropped)
		}
		w.runItems(q)
		if len(q) > 0 {
			continue
		}
		if closed {
			return
		}
		<-s.wake
	}
}

// runItems runs queued writes in order; consecutive transitions go to the store as one batch
// (one commit), which is what lets a burst of state changes keep up with the screen.
func (w *ledgerWriter) runItems(q []writerItem) {
	var batch []ledgerOp
	for _, it := range q {
		if it.op != nil {
			batch = append(batch, *it.op)
			continue
		}
		if len(batch) > 0 {
			w.apply(batch)
			batch = nil
		}
		it.fn()
	}
	if len(batch) > 0 {
		w.apply(batch)
	}
}

// post queues f after every write already queued for member. It never blocks: the state lock
// may be held by the caller.
func (w *ledgerWriter) post(member string, f func()) {
	w.enqueue(w.shard(member), writerItem{fn: f}, false)
}

// postMust queues f after every write already queued for member and never drops it (a caller
// waits for f to run).
func (w *ledgerWriter) postMust(member string, f func()) {
	w.enqueue(w.shard(member), writerItem{fn: f}, true)
}

// record queues a transition (and the close of the task it ends) after every write already
// queued for its member. It never blocks.
func (w *ledgerWriter) record(op ledgerOp) {
	w.enqueue(w.shard(op.member), writerItem{op: &op}, false)
}

// enqueue adds it to the shard; must (barriers, mints) are never dropped. After close, it runs on
// the caller's goroutine.
func (w *ledgerWriter) enqueue(s *writerShard, it writerItem, must bool) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		w.runItems([]writerItem{it})
		return
	}
	if !must && len(s.q) >= shardQueueLimit {
		s.dropped++
		s.mu.Unlock()
		return
	}
	s.q = append(s.q, it)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// do runs f after every write already queued for member and waits for it.
func (w *ledgerWriter) do(member string, f func()) {
	done := make(chan struct{})
	w.enqueue(w.shard(member), writerItem{fn: func() { f(); close(done) }}, true)
	<-done
}

// flush waits until every write queued for member so far has run.
func (w *ledgerWriter) flush(member string) { w.do(member, func() {}) }

// flushAll waits until every write queued so far, for any member, has run.
func (w *ledgerWriter) flushAll() {
	var wg sync.WaitGroup
	for _, s := range w.shards {
		wg.Add(1)
		w.enqueue(s, writerItem{fn: wg.Done}, true)
	}
	wg.Wait()
}

// close runs what is queued and stops the workers; later writes run on their caller.
func (w *ledgerWriter) close() {
	for _, s := range w.shards {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
	for _, s := range w.shards {
		<-s.done
	}
}
