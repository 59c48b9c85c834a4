package keys_test

import (
	"fmt"
	"time"

	"agent/tui/keys"
)

// The terminal UI's input loop: bytes from the tty go through the decoder;
// when the decoder holds a lone ESC (Pending), the reader waits the escape
// timeout and calls Flush if nothing came. Key events go through the
// matcher, in the focused context first.
func Example() {
	var dec keys.Decoder
	km, problems := keys.ParseFile([]byte(`{"version": 1, "bindings": {
		"chat-input": {"history-search": "ctrl+x ctrl+r"}}}`))
	if km == nil {
		fmt.Println(problems)
		return
	}
	m := keys.NewMatcher(km)
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

	reads := [][]byte{[]byte("hi"), []byte("\x18\x12"), []byte("\x1b"), nil /* the escape timeout */, []byte("\r")}
	var evs []keys.Event
	for _, p := range reads {
		if p == nil {
			evs = dec.Flush(evs[:0])
		} else {
			evs = dec.Feed(evs[:0], p)
		}
		for _, e := range evs {
			if e.Kind != keys.EventKey {
				continue
			}
			match := m.Press(now, e.Stroke, keys.ChatInput, keys.App)
			switch match.Outcome {
			case keys.Matched:
				fmt.Printf("%s: %s\n", e.Stroke, match.Action)
			case keys.Started:
				fmt.Printf("%s: waiting for the chord\n", e.Stroke)
			case keys.Unbound:
				if e.Rune != 0 {
					fmt.Printf("%s: types %q\n", e.Stroke, e.Rune)
				} else {
					fmt.Printf("%s: unbound\n", e.Stroke)
				}
			}
		}
		if dec.Pending() {
			fmt.Println("(lone ESC held: wait for more input, then Flush)")
		}
	}
	fmt.Println("footer:", km.Hint(keys.ChatInput, keys.ActHistorySearch), "search ·", km.Hint(keys.ChatInput, keys.ActSubmit), "send")
	// Output:
	// h: types 'h'
	// i: types 'i'
	// ctrl+x: waiting for the chord
	// ctrl+r: history-search
	// (lone ESC held: wait for more input, then Flush)
	// escape: unbound
	// enter: submit
	// footer: Ctrl+X Ctrl+R search · Enter send
}
