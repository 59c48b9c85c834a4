// Package httpguard is what every HTTP server of the project puts in
// front of its handlers (the loopback and remote modes of `agent mcp
// serve`, the external-event endpoint, the sign-in callback listener):
//
//   - A response written before the request body was read closes the
//     connection. Go's server otherwise reads up to 256 KiB of an unread
//     body before it writes the response, so a refusal of a request that
//     declares a body and never sends it would wait for the read timeout
//     (docs/reference/mcp.md, "Loopback HTTP mode": Host, Origin and the
//     token are checked before the body is read, and the refusal goes out
//     at once).
//   - A listener that bounds the open connections, in total and per client
//     address. A connection that is not running a request (it has not sent
//     a complete request head yet, or it is idle between requests) is the
//     first to go when a new one needs room, so a flood of idle connections
//     cannot keep a valid client out and memory stays bounded
//     (docs/design.md, "Connection limits and refusals in front of every
//     HTTP server").
//
// Imports: standard library only.
package httpguard

import (
	"container/list"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// CloseUnread wraps h: when h answers while the request's body has not
// been read to its end, the response carries "Connection: close", so it
// goes out at once and the connection ends after it.
func CloseUnread(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
			h.ServeHTTP(w, r)
			return
		}
		b := &watchedBody{ReadCloser: r.Body}
		r.Body = b
		cw := &closingWriter{ResponseWriter: w, body: b}
		h.ServeHTTP(cw, r)
		cw.decide() // a handler that wrote nothing: Go answers 200 after this
	})
}

// watchedBody notes when the body has been read to its end.
type watchedBody struct {
	io.ReadCloser
	eof atomic.Bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.eof.Store(true)
	}
	return n, err
}

// closingWriter sets "Connection: close" before the header goes out when
// the body is still unread.
type closingWriter struct {
	http.ResponseWriter
	body    *watchedBody
	decided bool
}

func (w *closingWriter) decide() {
	if w.decided {
		return
	}
	w.decided = true
	if !w.body.eof.Load() {
		w.ResponseWriter.Header().Set("Connection", "close")
		// A limit reader that hits its limit tells the server's writer
		// that the request was too large (documented for MaxBytesReader):
		// the server then closes gracefully, shutting its side first and
		// waiting briefly, so a client still sending its body reads the
		// answer rather than a reset. It reads one byte of its own, never
		// the request's body.
		http.MaxBytesReader(w.ResponseWriter, io.NopCloser(strings.NewReader("x")), 0).Read(make([]byte, 1)) //nolint:errcheck // the error is the point
	}
}

func (w *closingWriter) WriteHeader(code int) {
	if code >= 200 {
		w.decide()
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *closingWriter) Write(p []byte) (int, error) {
	w.decide()
	return w.ResponseWriter.Write(p)
}

// Flush keeps streaming answers (SSE) working through the wrapper.
func (w *closingWriter) Flush() {
	w.decide()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *closingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Defaults of Limits.
const (
	DefaultMaxConns   = 256
	DefaultMaxPerAddr = 64
	// DefaultHeaderTimeout is how long a connection may take to send a
	// complete request head (http.Server.ReadHeaderTimeout).
	DefaultHeaderTimeout = 10 * time.Second
	// DefaultMaxHeaderBytes bounds a request head: a bearer token is at
	// most 8 KiB (docs/reference/mcp.md, "Access-token verification") and
	// the rest is small.
	DefaultMaxHeaderBytes = 64 << 10
)

// Limits bounds the connections of one listener.
type Limits struct {
	// MaxConns bounds the open connections; 0 means DefaultMaxConns.
	MaxConns int
	// MaxPerAddr bounds the open connections of one client address (an
	// IPv4 address, or the /64 of an IPv6 one); 0 means
	// DefaultMaxPerAddr, and a value at or above MaxConns means no limit
	// of its own (a loopback listener, where every client is 127.0.0.1).
	MaxPerAddr int
	// Exempt are peers counted in the total only: trusted proxies, which
	// carry every client's connections.
	Exempt []netip.Addr
}

// Stats are a Guard's counters.
type Stats struct {
	Open     int    // connections open now
	Accepted uint64 // connections admitted
	Refused  uint64 // connections closed at once: no room and none idle
	Evicted  uint64 // connections not running a request, closed to make room
}

// Guard bounds the connections of one listener. Install it with Serve or
// with Listener and ConnState.
type Guard struct {
	max, perAddr int
	exempt       map[netip.Addr]bool

	mu     sync.Mutex
	byKey  map[netip.Prefix]*peer
	open   int
	accept atomic.Uint64
	refuse atomic.Uint64
	evict  atomic.Uint64
}

// peer is one client address's connections; waiting lists those not
// running a request, oldest first.
type peer struct {
	n       int
	waiting list.List // of *conn
}

// New returns a Guard with the limits l.
func New(l Limits) *Guard {
	g := &Guard{max: l.MaxConns, perAddr: l.MaxPerAddr, exempt: map[netip.Addr]bool{}, byKey: map[netip.Prefix]*peer{}}
	if g.max <= 0 {
		g.max = DefaultMaxConns
	}
	if g.perAddr <= 0 {
		g.perAddr = DefaultMaxPerAddr
	}
	if g.perAddr > g.max {
		g.perAddr = g.max
	}
	for _, a := range l.Exempt {
		g.exempt[a.Unmap()] = true
	}
	return g
}

// Stats returns the counters.
func (g *Guard) Stats() Stats {
	g.mu.Lock()
	open := g.open
	g.mu.Unlock()
	return Stats{Open: open, Accepted: g.accept.Load(), Refused: g.refuse.Load(), Evicted: g.evict.Load()}
}

// Serve sets up srv with the guard (its listener, connection states, the
// CloseUnread handler, and a header timeout and header size where srv
// leaves them zero) and serves ln.
func (g *Guard) Serve(srv *http.Server, ln net.Listener) error {
	g.Configure(srv)
	return srv.Serve(g.Listener(ln))
}

// Configure sets up srv as Serve does, for a caller that serves the
// listener itself (it must then serve g.Listener(ln)).
func (g *Guard) Configure(srv *http.Server) {
	srv.Handler = CloseUnread(srv.Handler)
	if srv.ReadHeaderTimeout <= 0 {
		srv.ReadHeaderTimeout = DefaultHeaderTimeout
	}
	if srv.MaxHeaderBytes <= 0 {
		srv.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	prev := srv.ConnState
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		g.ConnState(c, s)
		if prev != nil {
			prev(c, s)
		}
	}
}

// Listener wraps ln: Accept admits a connection when there is room, or
// makes room by closing the connection that has waited longest without
// running a request (of the same address when that address is at its
// limit, else of the address with the most connections); when there is
// none, the new connection is closed at once and Accept goes on.
func (g *Guard) Listener(ln net.Listener) net.Listener { return &listener{Listener: ln, g: g} }

type listener struct {
	net.Listener
	g *Guard
}

func (l *listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if gc := l.g.admit(c); gc != nil {
			return gc, nil
		}
	}
}

// conn is an admitted connection.
type conn struct {
	net.Conn
	g    *Guard
	key  netip.Prefix
	elem *list.Element // in its peer's waiting list, or nil while a request runs
	gone bool
	once sync.Once
}

func (c *conn) Close() error {
	c.once.Do(c.g.release(c))
	return c.Conn.Close()
}

// keyOf is the unit counted per address: an IPv4 address, or the /64 of
// an IPv6 one (one host usually has a whole /64).
func keyOf(a net.Addr) (netip.Prefix, netip.Addr) {
	var ip netip.Addr
	if ta, ok := a.(*net.TCPAddr); ok {
		ip, _ = netip.AddrFromSlice(ta.IP)
	} else if ap, err := netip.ParseAddrPort(a.String()); err == nil {
		ip = ap.Addr()
	}
	ip = ip.Unmap()
	if !ip.IsValid() {
		return netip.Prefix{}, ip
	}
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	p, _ := ip.Prefix(bits)
	return p, ip
}

func (g *Guard) admit(nc net.Conn) net.Conn {
	key, ip := keyOf(nc.RemoteAddr())
	var victims []*conn
	g.mu.Lock()
	p := g.byKey[key]
	if p == nil {
		p = &peer{}
	}
	if !g.exempt[ip] && p.n >= g.perAddr {
		v := g.oldestLocked(p)
		if v == nil {
			g.mu.Unlock()
			g.refuse.Add(1)
			nc.Close()
			return nil
		}
		victims = append(victims, v)
	}
	if g.open >= g.max && len(victims) == 0 {
		v := g.busiestWaitingLocked()
		if v == nil {
			g.mu.Unlock()
			g.refuse.Add(1)
			nc.Close()
			return nil
		}
		victims = append(victims, v)
	}
	c := &conn{Conn: nc, g: g, key: key}
	g.byKey[key] = p
	p.n++
	g.open++
	c.elem = p.waiting.PushBack(c) // StateNew: no request head yet
	g.mu.Unlock()
	g.accept.Add(1)
	for _, v := range victims {
		g.evict.Add(1)
		v.Close()
	}
	return c
}

// oldestLocked takes p's connection that has waited longest without a
// request out of the waiting list (its Close then frees its place), or
// returns nil.
func (g *Guard) oldestLocked(p *peer) *conn {
	e := p.waiting.Front()
	if e == nil {
		return nil
	}
	v := e.Value.(*conn)
	p.waiting.Remove(e)
	v.elem = nil
	p.n--
	g.open--
	v.gone = true
	if p.n == 0 {
		delete(g.byKey, v.key)
	}
	return v
}

// busiestWaitingLocked takes a waiting connection of the address with the
// most connections that has one.
func (g *Guard) busiestWaitingLocked() *conn {
	var best *peer
	for _, p := range g.byKey {
		if p.waiting.Len() > 0 && (best == nil || p.n > best.n) {
			best = p
		}
	}
	if best == nil {
		return nil
	}
	return g.oldestLocked(best)
}

// release returns the function that frees c's place (once).
func (g *Guard) release(c *conn) func() {
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if c.gone {
			return // evicted: already uncounted
		}
		c.gone = true
		p := g.byKey[c.key]
		if c.elem != nil {
			p.waiting.Remove(c.elem)
			c.elem = nil
		}
		p.n--
		g.open--
		if p.n == 0 {
			delete(g.byKey, c.key)
		}
	}
}

// ConnState follows the server's connection states: a connection running
// a request (StateActive) cannot be evicted; a new or idle one can.
func (g *Guard) ConnState(nc net.Conn, s http.ConnState) {
	c, ok := nc.(*conn)
	if !ok {
		return
	}
	switch s {
	case http.StateActive:
		g.mu.Lock()
		if !c.gone && c.elem != nil {
			g.byKey[c.key].waiting.Remove(c.elem)
			c.elem = nil
		}
		g.mu.Unlock()
	case http.StateIdle:
		g.mu.Lock()
		if !c.gone && c.elem == nil {
			c.elem = g.byKey[c.key].waiting.PushBack(c)
		}
		g.mu.Unlock()
	case http.StateClosed, http.StateHijacked:
		c.once.Do(g.release(c))
	}
}
