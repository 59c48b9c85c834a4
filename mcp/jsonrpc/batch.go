package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// JSON-RPC 2.0 batches (JSON-RPC 2.0 §6) as MCP 2025-03-26 has them: a
// peer may send an array of requests and notifications (or of responses),
// and the receiver MUST accept it (2025-03-26 basic/index "Batching"). The
// other revisions refuse batches, so whether one is taken depends on the
// revision negotiated with the peer: decoding reports a batch as ErrBatch
// with the array attached, and the receiver splits it with DecodeBatch
// only when that revision allows it.

// BatchItem is one element of a batch: the message, or, for an element
// that is not a valid message, a *DecodeError (whose ID is the element's id
// when it could be read).
type BatchItem struct {
	Msg *Message
	Err error
}

// DecodeBatch splits a batch into its elements, in order. Each element is
// decoded as DecodeWith decodes a message; one that fails is reported in
// its BatchItem and the others are still returned. The whole must be one
// well-formed JSON array within opts' bounds (ErrParse, ErrTooLarge); an
// empty array is ErrInvalid ("an empty batch", JSON-RPC 2.0 §6 answers it
// with a single error response).
func DecodeBatch(data []byte, opts DecodeOptions) ([]BatchItem, error) {
	maxDepth, err := opts.depth(len(data))
	if err != nil {
		return nil, err
	}
	s := scanner{data: data, maxDepth: maxDepth}
	s.skipSpace()
	if s.pos >= len(data) || data[s.pos] != '[' {
		return nil, &DecodeError{Err: ErrInvalid, Msg: "a batch must be a JSON array"}
	}
	open := s.pos
	if err := s.value(0); err != nil {
		return nil, &DecodeError{Err: ErrParse, Msg: err.Error()}
	}
	s.skipSpace()
	if s.pos != len(data) {
		return nil, &DecodeError{Err: ErrParse, Msg: s.errorf("unexpected data after the batch").Error()}
	}
	// The array is valid: walk its elements again to cut them out.
	s.pos = open + 1
	var items []BatchItem
	for {
		s.skipSpace()
		if data[s.pos] == ']' {
			break
		}
		start := s.pos
		s.value(1) //nolint:errcheck // validated above
		elem := data[start:s.pos]
		m, err := DecodeWith(elem, opts)
		if errors.Is(err, ErrBatch) {
			err = &DecodeError{Err: ErrInvalid, Msg: "a batch element must be a JSON object, not an array"}
		}
		items = append(items, BatchItem{Msg: m, Err: err})
		s.skipSpace()
		if data[s.pos] == ',' {
			s.pos++
		}
	}
	if len(items) == 0 {
		return nil, &DecodeError{Err: ErrInvalid, Msg: "an empty batch"}
	}
	return items, nil
}

// AppendBatch appends the encoding of ms as one JSON array, on one line.
func AppendBatch(dst []byte, ms []*Message) ([]byte, error) {
	dst = append(dst, '[')
	for i, m := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = AppendMessage(dst, m); err != nil {
			return nil, err
		}
	}
	return append(dst, ']'), nil
}

// BatchWriter is the optional capability of a Stream to write several
// messages as one batch (one line on stdio).
type BatchWriter interface {
	WriteBatch(ctx context.Context, ms []*Message) error
}

// WriteBatch writes ms as one batch line.
func (w *Writer) WriteBatch(ms []*Message) error {
	return w.writeLine(func(buf []byte) ([]byte, error) { return AppendBatch(buf, ms) })
}

func (s *ioStream) WriteBatch(ctx context.Context, ms []*Message) error {
	if err := s.writable(ctx); err != nil {
		return err
	}
	return s.w.WriteBatch(ms)
}

// BatchOptions configures NewBatchStream.
type BatchOptions struct {
	// Allow reports whether the peer may send batches now (it negotiated
	// MCP 2025-03-26); it is asked for every batch that arrives. nil
	// never allows them.
	Allow func() bool
	// Decode bounds the elements (as the stream's own reader does).
	Decode DecodeOptions
}

// NewBatchStream returns st with batches taken when opts.Allow says so: a
// batch that arrives is split and its messages are returned by Read one
// at a time, and the responses to its requests are held back and written
// together as one batch when the last one is written (JSON-RPC 2.0 §6:
// "the Server should respond with an Array containing the corresponding
// Response objects, after all of the batch Request objects have been
// processed"), through st's WriteBatch when it has one. Elements that are
// not valid messages, and requests whose id is already in use, are
// answered with an error response in that array; a batch of notifications
// and responses only gets no answer. A batch that is not allowed is
// returned by Read as the DecodeError it is (ErrBatch), for the caller to
// refuse. It keeps st's contract: Read from one goroutine, Write from any.
func NewBatchStream(st Stream, opts BatchOptions) Stream {
	return &batchStream{Stream: st, opts: opts, open: map[ID]*batchReply{}}
}

type batchStream struct {
	Stream
	opts BatchOptions

	mu    sync.Mutex
	queue []*Message // split from a batch, not yet returned by Read
	// open holds the id of every request read and not yet answered: the
	// batch its answer belongs to, or nil for a request that came alone.
	open map[ID]*batchReply
}

// batchReply collects the answer to one batch.
type batchReply struct {
	want int // responses still to come
	out  []*Message
}

var noBatchReply *batchReply // the open entry of a request outside a batch

func (b *batchStream) Read() (*Message, error) {
	for {
		b.mu.Lock()
		if len(b.queue) > 0 {
			m := b.queue[0]
			b.queue[0] = nil
			b.queue = b.queue[1:]
			b.mu.Unlock()
			return m, nil
		}
		b.mu.Unlock()
		m, err := b.Stream.Read()
		if err == nil {
			if m.Kind() == KindRequest {
				b.mu.Lock()
				b.open[m.ID] = noBatchReply
				b.mu.Unlock()
			}
			return m, nil
		}
		var de *DecodeError
		if !errors.As(err, &de) || !errors.Is(de.Err, ErrBatch) || b.opts.Allow == nil || !b.opts.Allow() {
			return m, err
		}
		items, err := DecodeBatch(de.Batch, b.opts.Decode)
		if err != nil {
			return nil, err // an empty batch: answered as an invalid message
		}
		if err := b.split(items); err != nil {
			return nil, err
		}
	}
}

// split queues a batch's messages and writes at once the part of its
// answer that needs no handler.
func (b *batchStream) split(items []BatchItem) error {
	reply := &batchReply{}
	b.mu.Lock()
	for _, it := range items {
		if it.Err != nil {
			var de *DecodeError
			if errors.As(it.Err, &de) && !de.Response {
				reply.out = append(reply.out, NewErrorResponse(de.ID, &Error{Code: de.Code(), Message: de.Error()}))
			}
			continue
		}
		m := it.Msg
		if m.Kind() == KindRequest {
			if _, dup := b.open[m.ID]; dup {
				reply.out = append(reply.out, NewErrorResponse(m.ID, &Error{Code: CodeInvalidRequest, Message: fmt.Sprintf("request id %v is already in use", m.ID)}))
				continue
			}
			b.open[m.ID] = reply
			reply.want++
		}
		b.queue = append(b.queue, m)
	}
	done := reply.want == 0 && len(reply.out) > 0
	b.mu.Unlock()
	if done {
		return b.writeBatch(context.Background(), reply.out)
	}
	return nil
}

func (b *batchStream) Write(ctx context.Context, m *Message) error {
	if m.Kind() == KindResponse && m.ID.IsValid() {
		b.mu.Lock()
		reply, ok := b.open[m.ID]
		delete(b.open, m.ID)
		if ok && reply != nil {
			reply.out = append(reply.out, m)
			reply.want--
			done := reply.want == 0
			b.mu.Unlock()
			if done {
				return b.writeBatch(ctx, reply.out)
			}
			return nil
		}
		b.mu.Unlock()
	}
	return b.Stream.Write(ctx, m)
}

func (b *batchStream) writeBatch(ctx context.Context, ms []*Message) error {
	if bw, ok := b.Stream.(BatchWriter); ok {
		return bw.WriteBatch(ctx, ms)
	}
	for _, m := range ms {
		if err := b.Stream.Write(ctx, m); err != nil {
			return err
		}
	}
	return nil
}
