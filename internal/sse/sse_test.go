package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// chunkReader returns the input in pieces split at the given offsets.
type chunkReader struct {
	data   []byte
	splits []int
	pos    int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.pos >= len(c.data) {
		return 0, io.EOF
	}
	end := len(c.data)
	for _, s := range c.splits {
		if s > c.pos {
			end = min(end, s)
			break
		}
	}
	n := copy(p, c.data[c.pos:end])
	c.pos += n
	return n, nil
}

func readAll(r io.Reader, opts Options) ([]Event, *Reader, error) {
	rd := NewReader(r, opts)
	var evs []Event
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			return evs, rd, nil
		}
		if err != nil {
			return evs, rd, err
		}
		evs = append(evs, ev)
	}
}

var cases = []struct {
	name string
	in   string
	want []Event
}{
	{"simple", "data: hello\n\n", []Event{{Data: "hello"}}},
	{"crlf", "event: delta\r\ndata: a\r\n\r\n", []Event{{Type: "delta", Data: "a"}}},
	{"lone cr", "data: a\rdata: b\r\r", []Event{{Data: "a\nb"}}},
	{"mixed endings", "data: 1\r\n\ndata: 2\r\rdata: 3\n\r\n", []Event{{Data: "1"}, {Data: "2"}, {Data: "3"}}},
	{"multi data", "data: a\ndata: b\ndata:\ndata: c\n\n", []Event{{Data: "a\nb\n\nc"}}},
	{"no space", "data:x\n\n", []Event{{Data: "x"}}},
	{"two spaces keep one", "data:  x\n\n", []Event{{Data: " x"}}},
	{"comments", ": keepalive\n:\ndata: a\n: mid\n\n", []Event{{Data: "a"}}},
	{"ids", "id: 7\ndata: a\n\ndata: b\n\n", []Event{{Data: "a", ID: "7"}, {Data: "b", ID: "7"}}},
	{"id with nul ignored", "id: 1\ndata: a\n\nid: x\x00y\ndata: b\n\n", []Event{{Data: "a", ID: "1"}, {Data: "b", ID: "1"}}},
	{"empty id resets", "id: 1\ndata: a\n\nid\ndata: b\n\n", []Event{{Data: "a", ID: "1"}, {Data: "b", ID: ""}}},
	{"empty data not dispatched", "id: p1\ndata:\n\ndata: a\n\n", []Event{{Data: "a", ID: "p1"}}},
	{"event only not dispatched", "event: x\n\ndata: a\n\n", []Event{{Data: "a"}}},
	{"unknown field", "foo: bar\ndata: a\n\n", []Event{{Data: "a"}}},
	{"field without colon", "data\ndata\n\n", []Event{{Data: "\n"}}},
	{"bom", "\xef\xbb\xbfdata: a\n\n", []Event{{Data: "a"}}},
	{"truncated final event", "data: a\n\ndata: b\n", []Event{{Data: "a"}}},
	{"truncated final line", "data: a\n\ndata: b", []Event{{Data: "a"}}},
	{"blank lines", "\n\n\ndata: a\n\n\n", []Event{{Data: "a"}}},
	{"json payload", "data: {\"x\":\"a:b\"}\n\n", []Event{{Data: `{"x":"a:b"}`}}},
	{"done marker", "data: [DONE]\n\n", []Event{{Data: "[DONE]"}}},
	{"utf8", "data: héllo ✓\n\n", []Event{{Data: "héllo ✓"}}},
	{"trailing cr at eof", "data: a\n\r", []Event{{Data: "a"}}},
	{"types change and reset", "event: a\ndata: 1\n\nevent: a\ndata: 2\n\nevent: b\ndata: 3\n\ndata: 4\n\nevent: a\ndata: 5\n\n",
		[]Event{{Type: "a", Data: "1"}, {Type: "a", Data: "2"}, {Type: "b", Data: "3"}, {Data: "4"}, {Type: "a", Data: "5"}}},
}

func TestReaderAtEveryChunkSplit(t *testing.T) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for split := 0; split <= len(c.in); split++ {
				for _, second := range []int{split + 1, split + 3} {
					r := &chunkReader{data: []byte(c.in), splits: []int{split, second}}
					got, _, err := readAll(r, Options{})
					if err != nil {
						t.Fatalf("split %d: %v", split, err)
					}
					if !equal(got, c.want) {
						t.Fatalf("split %d,%d: got %+v, want %+v", split, second, got, c.want)
					}
				}
			}
			// One byte at a time too.
			got, _, err := readAll(iotest.OneByteReader(strings.NewReader(c.in)), Options{})
			if err != nil || !equal(got, c.want) {
				t.Fatalf("one byte: %+v %v", got, err)
			}
		})
	}
}

// bareCases are read with BareJSON: JSON objects written outside the
// format, as some APIs report an error after the stream began.
var bareCases = []struct {
	name string
	in   string
	want []Event
}{
	{"one line after an event", "data: a\n\n{\"error\": {\"code\": 503, \"status\": \"UNAVAILABLE\"}}\n",
		[]Event{{Data: "a"}, {Data: `{"error": {"code": 503, "status": "UNAVAILABLE"}}`, Bare: true}}},
	{"over several lines", "data: a\n\n{\n  \"error\": {\n    \"code\": 503,\n    \"message\": \"x\"\n  }\n}\n",
		[]Event{{Data: "a"}, {Data: "{\n  \"error\": {\n    \"code\": 503,\n    \"message\": \"x\"\n  }\n}", Bare: true}}},
	{"crlf and indented", "  {\"error\":\r\n {\"code\": 1}}\r\n", []Event{{Data: "  {\"error\":\n {\"code\": 1}}", Bare: true}}},
	{"no line end before the end of the stream", "data: a\n\n{\"error\": {}}", []Event{{Data: "a"}, {Data: `{"error": {}}`, Bare: true}}},
	{"brackets inside strings", "{\"m\": \"a } b \\\" }\"\n}\n", []Event{{Data: "{\"m\": \"a } b \\\" }\"\n}", Bare: true}}},
	{"blank lines inside", "{\n\n\"e\": 1\n\n}\n", []Event{{Data: "{\n\"e\": 1\n}", Bare: true}}},
	{"blank line dispatches the format's event", "data: a\n{\n\n}\n", []Event{{Data: "a"}, {Data: "{\n}", Bare: true}}},
	{"cut off by the end of the stream", "data: a\n\n{\"error\": {\n", []Event{{Data: "a"}}},
	{"a field abandons it", "{\"error\": {\ndata: b\n\n", []Event{{Data: "b"}}},
	{"a comment abandons it", "{\n: ping\ndata: b\n\n", []Event{{Data: "b"}}},
	{"data in a string does not", "{\"x\": \"data: y\"}\n", []Event{{Data: `{"x": "data: y"}`, Bare: true}}},
	{"an open string ends with its line", "{\"x\": \"open\n}\ndata: b\n\n", []Event{{Data: "{\"x\": \"open\n}", Bare: true}, {Data: "b"}}},
	{"an array is not a start", "[{\"error\": 1}]\ndata: b\n\n", []Event{{Data: "b"}}},
}

func TestReaderBareJSONAtEveryChunkSplit(t *testing.T) {
	for _, c := range bareCases {
		t.Run(c.name, func(t *testing.T) {
			for split := 0; split <= len(c.in); split++ {
				r := &chunkReader{data: []byte(c.in), splits: []int{split, split + 2}}
				got, _, err := readAll(r, Options{BareJSON: true})
				if err != nil || !equal(got, c.want) {
					t.Fatalf("split %d: got %+v %v, want %+v", split, got, err, c.want)
				}
			}
			got, _, err := readAll(iotest.OneByteReader(strings.NewReader(c.in)), Options{BareJSON: true})
			if err != nil || !equal(got, c.want) {
				t.Fatalf("one byte: got %+v %v, want %+v", got, err, c.want)
			}
			// Without the option the format ignores those lines.
			off, _, err := readAll(strings.NewReader(c.in), Options{})
			if err != nil || !equal(off, withoutBare(c.want)) {
				t.Fatalf("without BareJSON: got %+v %v", off, err)
			}
		})
	}
	// The format's own streams read the same with the option.
	for _, c := range cases {
		t.Run(c.name+" with BareJSON", func(t *testing.T) {
			got, _, err := readAll(strings.NewReader(c.in), Options{BareJSON: true})
			if err != nil || !equal(got, c.want) {
				t.Errorf("got %+v %v, want %+v", got, err, c.want)
			}
		})
	}
}

func withoutBare(evs []Event) []Event {
	var out []Event
	for _, ev := range evs {
		if !ev.Bare {
			out = append(out, ev)
		}
	}
	return out
}

// A bare object is bounded like an event's data: one that never balances
// is an error at the bound, not unbounded growth.
func TestBareJSONBound(t *testing.T) {
	endless := io.MultiReader(strings.NewReader("{\n"), neverEnding('{'))
	if _, _, err := readAll(endless, Options{MaxLine: 1 << 12, BareJSON: true}); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("endless line: %v", err)
	}
	lines := strings.NewReader("{\n" + strings.Repeat("\"k\": [\n", 100))
	if _, _, err := readAll(lines, Options{MaxLine: 100, MaxEvent: 300, BareJSON: true}); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("many lines: %v", err)
	}
	ok := "{\"k\": \"" + strings.Repeat("v", 80) + "\"}\n"
	if evs, _, err := readAll(strings.NewReader(ok), Options{MaxLine: 100, BareJSON: true}); err != nil || len(evs) != 1 {
		t.Fatalf("object at the bound: %+v %v", evs, err)
	}
}

func equal(a, b []Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestRetry(t *testing.T) {
	_, rd, err := readAll(strings.NewReader("retry: 1500\nid: 3\ndata:\n\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := rd.Retry(); !ok || d != 1500*time.Millisecond {
		t.Fatalf("retry %v %v", d, ok)
	}
	if rd.LastEventID() != "3" {
		t.Fatalf("last id %q", rd.LastEventID())
	}
	for _, bad := range []string{"retry: x\n\n", "retry: -1\n\n", "retry: +5\n\n", "retry: 1.5\n\n", "retry:\n\n"} {
		_, rd, _ := readAll(strings.NewReader(bad), Options{})
		if _, ok := rd.Retry(); ok {
			t.Errorf("%q set a retry", bad)
		}
	}
}

func TestLineBound(t *testing.T) {
	long := "data: " + strings.Repeat("x", 1000) + "\n\n"
	for _, r := range []io.Reader{strings.NewReader(long), iotest.OneByteReader(strings.NewReader(long))} {
		_, _, err := readAll(r, Options{MaxLine: 100})
		if !errors.Is(err, ErrLineTooLong) {
			t.Fatalf("got %v, want ErrLineTooLong", err)
		}
	}
	// A line with no terminator at all is cut off at the bound, not read forever.
	endless := io.MultiReader(strings.NewReader("data: "), neverEnding('x'))
	if _, _, err := readAll(endless, Options{MaxLine: 1 << 16}); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("endless line: %v", err)
	}
	// Exactly at the bound is fine.
	ok := "data:" + strings.Repeat("y", 95) + "\n\n"
	if evs, _, err := readAll(strings.NewReader(ok), Options{MaxLine: 100}); err != nil || len(evs) != 1 {
		t.Fatalf("line at the bound: %v", err)
	}
	// Event data summed over lines is bounded too.
	many := strings.Repeat("data: "+strings.Repeat("z", 50)+"\n", 10) + "\n"
	if _, _, err := readAll(strings.NewReader(many), Options{MaxLine: 100, MaxEvent: 200}); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("event bound: %v", err)
	}
}

type neverEnding byte

func (b neverEnding) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

func TestReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom))
	evs, _, err := readAll(r, Options{})
	if len(evs) != 1 || !errors.Is(err, boom) {
		t.Fatalf("%v %v", evs, err)
	}
}

func TestWriteRoundTrip(t *testing.T) {
	for _, ev := range []Event{
		{Data: "plain"},
		{Type: "message", Data: "line1\nline2\r\nline3", ID: "42"},
		{Data: `{"jsonrpc":"2.0"}`},
		{Data: "trailing\n"},
	} {
		var b bytes.Buffer
		if err := Write(&b, ev); err != nil {
			t.Fatal(err)
		}
		got, _, err := readAll(&b, Options{})
		want := ev
		want.Data = strings.ReplaceAll(want.Data, "\r\n", "\n")
		if err != nil || len(got) != 1 || got[0] != want {
			t.Fatalf("round trip %+v: %+v %v", ev, got, err)
		}
	}
	var b bytes.Buffer
	if err := WriteRetry(&b, Event{ID: "p"}, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	got, rd, _ := readAll(&b, Options{})
	if d, _ := rd.Retry(); len(got) != 0 || rd.LastEventID() != "p" || d != 2*time.Second {
		t.Fatalf("priming event: %+v %q %v", got, rd.LastEventID(), d)
	}
	for _, bad := range []Event{{Type: "a\nb", Data: "x"}, {ID: "a\rb", Data: "x"}, {ID: "a\x00", Data: "x"}} {
		if err := Write(io.Discard, bad); err == nil {
			t.Errorf("Write(%+v) accepted", bad)
		}
	}
}

func FuzzReader(f *testing.F) {
	for _, c := range cases {
		f.Add([]byte(c.in), uint8(3))
	}
	for _, c := range bareCases {
		f.Add([]byte(c.in), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, split uint8) {
		whole, _, errWhole := readAll(bytes.NewReader(data), Options{MaxLine: 1 << 12})
		pieces, _, errPieces := readAll(&chunkReader{data: data, splits: []int{int(split), int(split) * 2}}, Options{MaxLine: 1 << 12})
		if (errWhole == nil) != (errPieces == nil) || !equal(whole, pieces) {
			t.Fatalf("chunking changed the result: %+v %v vs %+v %v", whole, errWhole, pieces, errPieces)
		}
		for _, ev := range whole {
			if strings.ContainsAny(ev.Type, "\r\n") || strings.ContainsRune(ev.ID, 0) || ev.Bare {
				t.Fatalf("bad field in %+v", ev)
			}
		}
		// With BareJSON: the same at every chunking, and the format's
		// events are those read without it.
		bare := Options{MaxLine: 1 << 12, BareJSON: true}
		bWhole, _, errBWhole := readAll(bytes.NewReader(data), bare)
		bPieces, _, errBPieces := readAll(&chunkReader{data: data, splits: []int{int(split), int(split) * 2}}, bare)
		if (errBWhole == nil) != (errBPieces == nil) || !equal(bWhole, bPieces) {
			t.Fatalf("chunking changed the result with BareJSON: %+v %v vs %+v %v", bWhole, errBWhole, bPieces, errBPieces)
		}
		if errBWhole == nil && errWhole == nil && !equal(withoutBare(bWhole), whole) {
			t.Fatalf("BareJSON changed the format's events: %+v vs %+v", bWhole, whole)
		}
		for _, ev := range bWhole {
			if ev.Bare && (len(ev.Data) > 1<<12 || !startsObject([]byte(ev.Data))) {
				t.Fatalf("bad bare object %q", ev.Data)
			}
		}
	})
}

func BenchmarkReader(b *testing.B) {
	var stream bytes.Buffer
	for i := 0; i < 2000; i++ {
		stream.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hello, world. This is a token."}}]}` + "\n\n")
		if i%50 == 0 {
			stream.WriteString(": keepalive\r\n\r\n")
		}
	}
	data := stream.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		rd := NewReader(bytes.NewReader(data), Options{})
		for {
			if _, err := rd.Next(); err != nil {
				break
			}
		}
	}
}
