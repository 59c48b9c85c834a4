package jsonrpc

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
)

// frameCase is a byte stream and what a Reader must make of it: one entry
// per Read call until io.EOF, each either a message id/method summary or
// the sentinel error of a refused line.
type frameCase struct {
	name string
	in   string
	max  int
	want []string // "kind:id:method" or "err:<sentinel text>"
}

var frameCases = []frameCase{
	{"one", `{"jsonrpc":"2.0","id":1,"method":"a"}` + "\n", 0, []string{"request:1:a"}},
	{"two", `{"jsonrpc":"2.0","id":1,"method":"a"}` + "\n" + `{"jsonrpc":"2.0","method":"b"}` + "\n", 0, []string{"request:1:a", "notification:null:b"}},
	{"crlf", `{"jsonrpc":"2.0","id":1,"result":{}}` + "\r\n", 0, []string{"response:1:"}},
	{"no final newline", `{"jsonrpc":"2.0","method":"a"}`, 0, []string{"notification:null:a"}},
	{"blank lines skipped", "\n  \n" + `{"jsonrpc":"2.0","method":"a"}` + "\n\r\n\n", 0, []string{"notification:null:a"}},
	{"garbage then valid", "Server started on stdio\n" + `{"jsonrpc":"2.0","method":"a"}` + "\n", 0, []string{"err:" + ErrParse.Error(), "notification:null:a"}},
	{"batch then valid", `[{"jsonrpc":"2.0","method":"a"}]` + "\n" + `{"jsonrpc":"2.0","method":"b"}` + "\n", 0, []string{"err:" + ErrBatch.Error(), "notification:null:b"}},
	{"too long then valid", `{"jsonrpc":"2.0","method":"` + strings.Repeat("x", 200) + `"}` + "\n" + `{"jsonrpc":"2.0","method":"b"}` + "\n", 100, []string{"err:" + ErrTooLarge.Error(), "notification:null:b"}},
	{"too long at end", strings.Repeat("y", 300), 100, []string{"err:" + ErrTooLarge.Error()}},
	{"at the limit", `{"jsonrpc":"2.0","method":"` + strings.Repeat("x", 70) + `"}` + "\r\n", 100, []string{"notification:null:" + strings.Repeat("x", 70)}},
	{"string with escaped newline", `{"jsonrpc":"2.0","method":"a\nb"}` + "\n", 0, []string{"notification:null:a\nb"}},
}

func summarize(m *Message, err error) string {
	if err != nil {
		for _, s := range []error{ErrParse, ErrInvalid, ErrBatch, ErrTooLarge} {
			if errors.Is(err, s) {
				return "err:" + s.Error()
			}
		}
		return "err:" + err.Error()
	}
	return m.Kind().String() + ":" + m.ID.String() + ":" + m.Method
}

func readAll(t *testing.T, r io.Reader, max int) []string {
	t.Helper()
	fr := NewReader(r, ReaderOptions{MaxMessage: max})
	var got []string
	for i := 0; i < 100; i++ {
		m, err := fr.Read()
		if err == io.EOF {
			return got
		}
		if err != nil && !IsDecodeError(err) {
			t.Fatalf("read error: %v", err)
		}
		got = append(got, summarize(m, err))
	}
	t.Fatal("reader does not reach EOF")
	return nil
}

// splitReader delivers data in the given chunks, one per Read.
type splitReader struct{ chunks [][]byte }

func (s *splitReader) Read(p []byte) (int, error) {
	for len(s.chunks) > 0 && len(s.chunks[0]) == 0 {
		s.chunks = s.chunks[1:]
	}
	if len(s.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.chunks[0])
	s.chunks[0] = s.chunks[0][n:]
	return n, nil
}

func TestReaderEveryChunkSplit(t *testing.T) {
	for _, c := range frameCases {
		t.Run(c.name, func(t *testing.T) {
			whole := readAll(t, strings.NewReader(c.in), c.max)
			if strings.Join(whole, "|") != strings.Join(c.want, "|") {
				t.Fatalf("got  %q\nwant %q", whole, c.want)
			}
			in := []byte(c.in)
			for i := 0; i <= len(in); i++ {
				for _, j := range []int{i, i + 1, len(in)} {
					if j < i || j > len(in) {
						continue
					}
					r := &splitReader{chunks: [][]byte{bytes.Clone(in[:i]), bytes.Clone(in[i:j]), bytes.Clone(in[j:])}}
					got := readAll(t, r, c.max)
					if strings.Join(got, "|") != strings.Join(c.want, "|") {
						t.Fatalf("split at %d,%d: got %q, want %q", i, j, got, c.want)
					}
				}
			}
			got := readAll(t, iotest.OneByteReader(strings.NewReader(c.in)), c.max)
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Fatalf("one byte at a time: got %q, want %q", got, c.want)
			}
		})
	}
}

func TestReaderLongLines(t *testing.T) {
	// Lines longer than the internal buffer are assembled; one over the
	// bound is skipped without holding it all in memory.
	big := `{"jsonrpc":"2.0","method":"m","params":{"a":"` + strings.Repeat("z", 3*readerBuffer) + `"}}`
	in := big + "\n" + strings.Repeat("q", 5*readerBuffer) + "\n" + big + "\n"
	fr := NewReader(strings.NewReader(in), ReaderOptions{MaxMessage: 4 * readerBuffer})
	m, err := fr.Read()
	if err != nil || len(m.Params) != len(big)-len(`{"jsonrpc":"2.0","method":"m","params":`)-1 {
		t.Fatalf("first: %v", err)
	}
	if _, err := fr.Read(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("second: err = %v, want ErrTooLarge", err)
	}
	if _, err := fr.Read(); err != nil {
		t.Fatalf("third: %v", err)
	}
	if _, err := fr.Read(); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
}

func TestReaderKeepsLines(t *testing.T) {
	// Params of an earlier message must survive later reads.
	in := `{"jsonrpc":"2.0","method":"a","params":{"n":1}}` + "\n" + `{"jsonrpc":"2.0","method":"b","params":{"n":2}}` + "\n"
	fr := NewReader(strings.NewReader(in), ReaderOptions{})
	m1, _ := fr.Read()
	m2, _ := fr.Read()
	if string(m1.Params) != `{"n":1}` || string(m2.Params) != `{"n":2}` {
		t.Fatalf("params = %s, %s", m1.Params, m2.Params)
	}
}

func TestReaderError(t *testing.T) {
	boom := errors.New("boom")
	fr := NewReader(iotest.ErrReader(boom), ReaderOptions{})
	if _, err := fr.Read(); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
}

func TestWriterOneWritePerMessage(t *testing.T) {
	var rec recordingWriter
	w := NewWriter(&rec)
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			m, _ := NewRequest(Int64ID(int64(i)), "m", map[string]string{"p": strings.Repeat("x", i*100)})
			if err := w.Write(m); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	if len(rec.writes) != 50 {
		t.Fatalf("%d writes, want 50", len(rec.writes))
	}
	for _, b := range rec.writes {
		if bytes.Count(b, []byte("\n")) != 1 || b[len(b)-1] != '\n' {
			t.Fatalf("write is not one line: %q", b)
		}
		if _, err := Decode(b[:len(b)-1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Write(&Message{}); !errors.Is(err, ErrEncode) {
		t.Fatalf("invalid message: err = %v", err)
	}
}

type recordingWriter struct {
	mu     sync.Mutex
	writes [][]byte
}

func (r *recordingWriter) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, bytes.Clone(p))
	return len(p), nil
}
