package keys

import (
	"strings"
	"testing"
	"time"
)

// mixedInput is a session's worth of input: typing (ASCII and UTF-8),
// editing and navigation keys in legacy and kitty forms, Alt chords, and
// bracketed pastes.
func mixedInput() []byte {
	var b strings.Builder
	for b.Len() < 1<<20 {
		b.WriteString("Refactor the parser so that it reports every problem; ")
		b.WriteString("naïve café — 日本語の入力 ")
		b.WriteString("\x1b[A\x1b[B\x1b[1;5C\x1b[1;5D\x1b[3~\x1b[5~\x1bOP")
		b.WriteString("\x1b[97;5u\x1b[13;2u\x1b[27u\x1b[57399u")
		b.WriteString("\x1bb\x1bf\x1b\x7f\x01\x05\x0b\x17\x15\r\x7f\x7f\t")
		b.WriteString("\x1b[200~func main() {\r\n\tfmt.Println(\"hello, 世界\")\r\n}\r\n\x1b[201~")
	}
	return []byte(b.String())
}

// decodeReads decodes in as the UI's input goroutine does (tui/app.go):
// reads of at most 4 KiB, each decoded into the same reused slice.
func decodeReads(d *Decoder, evs []Event, in []byte) []Event {
	for off := 0; off < len(in); off += 4096 {
		evs = d.Feed(evs[:0], in[off:min(off+4096, len(in))])
	}
	return d.Flush(evs[:0])
}

// BenchmarkDecodeMixed is the performance target of the decoder: at least
// 100 MB/s of mixed input.
func BenchmarkDecodeMixed(b *testing.B) {
	in := mixedInput()
	var d Decoder
	evs := make([]Event, 0, 4096)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		evs = decodeReads(&d, evs, in)
	}
}

func BenchmarkDecodeKeysOnly(b *testing.B) {
	var s strings.Builder
	for s.Len() < 1<<20 {
		s.WriteString("typing some words, and more \x1b[A\x1b[1;5C\x1b[97;5u\x1bb\x17\r")
	}
	in := []byte(s.String())
	var d Decoder
	evs := make([]Event, 0, 4096)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		evs = decodeReads(&d, evs, in)
	}
}

// BenchmarkDecodeOneBuffer decodes the whole mixed input into one slice
// of about a million events: bound by memory bandwidth rather than by the
// decoder, and not how the UI reads.
func BenchmarkDecodeOneBuffer(b *testing.B) {
	in := mixedInput()
	var d Decoder
	evs := make([]Event, 0, len(in))
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		evs = d.Flush(d.Feed(evs[:0], in))
	}
}

func BenchmarkLookup(b *testing.B) {
	km := Defaults()
	strokes := []Stroke{{Key: 'r', Mod: ModCtrl}, {Key: KeyEnter}, {Key: 'x'}, {Key: KeyUp}}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		km.Lookup(ChatInput, strokes[i&3])
		i++
	}
}

func BenchmarkMatcherPress(b *testing.B) {
	m := NewMatcher(Defaults())
	now := time.Now()
	s := Stroke{Key: 'r', Mod: ModCtrl}
	b.ReportAllocs()
	for b.Loop() {
		m.Press(now, s, ChatInput, App)
	}
}

func BenchmarkParseFile(b *testing.B) {
	data := []byte(`{"$schema": "urn:agent:keybindings:v1", "version": 1, "bindings": {
		"chat-input": {"submit": ["enter", "ctrl+j"], "history-search": "ctrl+x ctrl+r", "delete-word": null},
		"list-picker": {"next": ["down", "j"], "previous": ["up", "k"]}}}`)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		ParseFile(data)
	}
}
