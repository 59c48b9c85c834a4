package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"agent/agent"
	"agent/events"
	"agent/internal/quote"
)

// External events in a session (docs/reference/events.md): main joins
// package events (which knows no sessions) with the session runtime.

// checkEventFlags applies the flag rules of docs/reference/cli.md, "Event
// flags": the port is required with grants, and neither it nor a proxy
// means anything without them. Usage errors (exit 2).
func checkEventFlags(cmd string, sf *sessionFlags) error {
	if len(sf.eventGrants) == 0 {
		if sf.eventPort != "" || len(sf.eventProxies) > 0 {
			return usagef(cmd, "--external-event-port and --external-event-trusted-proxy need at least one --external-event-grant")
		}
		return nil
	}
	if sf.eventPort == "" {
		return usagef(cmd, "--external-event-grant needs --external-event-port (the loopback port your proxy or tunnel forwards to)")
	}
	if _, err := eventPort(sf.eventPort); err != nil {
		return usagef(cmd, "%v", err)
	}
	if _, err := events.ParseTrustedProxies(sf.eventProxies); err != nil {
		return usagef(cmd, "%v", err)
	}
	return nil
}

func eventPort(v string) (int, error) {
	p, err := strconv.Atoi(v)
	if err != nil || p < 1 || p > 65535 {
		return 0, fmt.Errorf("--external-event-port %q: want a port number from 1 to 65535", quote.V(v))
	}
	return p, nil
}

// loadGrants reads and checks the grant files: any invalid grant refuses
// the start (exit 1) with a message naming the file and the field.
func loadGrants(sf *sessionFlags) ([]events.Grant, error) {
	if len(sf.eventGrants) == 0 {
		return nil, nil
	}
	return events.LoadGrants(sf.eventGrants)
}

// eventTarget starts an event's turn: no tools, sent by external:<grantId>,
// the claimed name only a claim (docs/reference/events.md, "The event's
// turn").
type eventTarget struct{ s *agent.Session }

func (t eventTarget) SubmitExternal(_ context.Context, ev events.Event) (string, error) {
	turn, err := t.s.Submit(agent.TurnRequest{Prompt: ev.Content, From: ev.From(), ClaimedName: ev.ClaimedName, NoTools: true})
	if err != nil {
		return "", fmt.Errorf("%w: %w", events.ErrCannotTake, err)
	}
	return turn.ID, nil
}

// eventEndpoint is a session's running endpoint.
type eventEndpoint struct {
	srv   *events.Server
	audit *events.AuditLog
	done  chan struct{}
}

// startEvents opens the endpoint of a session on 127.0.0.1, with its audit
// log beside the transcript (~/.agent/sessions/<id>.events.log, 0600).
func startEvents(c *agent.WorkspaceSession, sf *sessionFlags, grants []events.Grant) (*eventEndpoint, error) {
	if len(grants) == 0 {
		return nil, nil
	}
	port, err := eventPort(sf.eventPort)
	if err != nil {
		return nil, err
	}
	proxies, err := events.ParseTrustedProxies(sf.eventProxies)
	if err != nil {
		return nil, err
	}
	audit, err := events.OpenAuditLog(filepath.Join(agent.SessionsDir(c.Home), c.Session.ID()+".events.log"), events.AuditLogOptions{})
	if err != nil {
		return nil, fmt.Errorf("the event audit log: %w", err)
	}
	srv, err := events.New(events.Options{Grants: grants, Port: port, TrustedProxies: proxies, Target: eventTarget{c.Session}, Audit: audit})
	if err != nil {
		audit.Close()
		return nil, err
	}
	if _, err := srv.Listen(); err != nil {
		srv.Close()
		audit.Close()
		return nil, fmt.Errorf("the external-event endpoint on 127.0.0.1:%d: %w", port, err)
	}
	ep := &eventEndpoint{srv: srv, audit: audit, done: make(chan struct{})}
	go func() {
		defer close(ep.done)
		srv.Serve(context.Background())
	}()
	return ep, nil
}

// Close stops the endpoint and closes the audit log; nil-safe.
// retarget makes later events start their turns in c (the terminal UI's
// /resume): the endpoint, its grants with their revocations, spent tokens
// and rate windows, and its audit log stay as they are. nil-safe.
func (ep *eventEndpoint) retarget(c *agent.WorkspaceSession) {
	if ep != nil {
		ep.srv.SetTarget(eventTarget{c.Session})
	}
}

func (ep *eventEndpoint) Close() {
	if ep == nil {
		return
	}
	ep.srv.Close()
	<-ep.done
	ep.audit.Close()
}

// command runs /events and /events revoke GRANT_ID in a session
// (docs/reference/events.md, "Revocation"); nil-safe: a session without
// grants lists none.
func (ep *eventEndpoint) command(args []string) (string, error) {
	switch {
	case len(args) == 0:
		if ep == nil {
			return "This session admits no external events (start it with --external-event-grant).\n", nil
		}
		var b strings.Builder
		for _, g := range ep.srv.Status() {
			b.WriteString(g.String() + "\n")
		}
		return b.String(), nil
	case args[0] == "revoke" && len(args) == 2:
		if ep == nil {
			return "", fmt.Errorf("no grant %q: this session admits no external events", quote.V(args[1]))
		}
		if err := ep.srv.Revoke(args[1]); err != nil {
			return "", fmt.Errorf("grant %q: %w", quote.V(args[1]), err)
		}
		return fmt.Sprintf("Revoked grant %s: the endpoint admits no more events for it.\n", args[1]), nil
	}
	return "", fmt.Errorf("%w: /events | /events revoke GRANT_ID", agent.ErrUsage)
}

// controlHandlers are the event-grant ops of a background session's control
// socket (`agent session events …`, docs/reference/events.md,
// "Revocation").
func (ep *eventEndpoint) controlHandlers() map[string]agent.ControlHandler {
	return map[string]agent.ControlHandler{
		"events.list": func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
			var lines []string
			if ep != nil {
				for _, g := range ep.srv.Status() {
					lines = append(lines, g.String())
				}
			}
			return json.Marshal(lines)
		},
		"events.revoke": func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
			var a struct {
				Grant string `json:"grant"`
			}
			if err := json.Unmarshal(args, &a); err != nil || a.Grant == "" {
				return nil, errors.New("events.revoke needs {\"grant\": ID}")
			}
			if ep == nil {
				return nil, fmt.Errorf("no grant %q: this session admits no external events", quote.V(a.Grant))
			}
			if err := ep.srv.Revoke(a.Grant); err != nil {
				return nil, fmt.Errorf("grant %q: %w", quote.V(a.Grant), err)
			}
			return json.Marshal("revoked")
		},
	}
}

func sessionEventsListCommand() *command {
	return &command{
		path:     "session events list",
		synopsis: "ID",
		summary:  "list the external-event grants of a background session",
		help: `One line per grant: its id, live or revoked, the principal it admits, its scopes,
issuer and resource, how many events it admitted and refused, and its rate windows.`,
		build: func(f *flagSet) func(context.Context, *env, []string) error {
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) != 1 {
					return usagef("session events list", "needs exactly one ID; 'agent session list' shows them")
				}
				data, err := eventsCall(ctx, e, args[0], "events.list", nil)
				if err != nil {
					return err
				}
				var lines []string
				if err := json.Unmarshal(data, &lines); err != nil {
					return fmt.Errorf("background session %s: malformed answer", args[0])
				}
				if len(lines) == 0 {
					fmt.Fprintf(e.err, "Background session %s admits no external events.\n", sanitizeLine(args[0]))
					return nil
				}
				var b strings.Builder
				for _, l := range lines {
					b.WriteString(sanitizeLine(l) + "\n")
				}
				_, err = io.WriteString(e.out, b.String())
				return err
			}
		},
	}
}

func sessionEventsRevokeCommand() *command {
	return &command{
		path:     "session events revoke",
		synopsis: "ID GRANT_ID",
		summary:  "withdraw an external-event grant of a background session",
		help:     `From then on the endpoint admits no event for the grant.`,
		build: func(f *flagSet) func(context.Context, *env, []string) error {
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) != 2 {
					return usagef("session events revoke", "needs the session ID and the GRANT_ID")
				}
				args0, _ := json.Marshal(map[string]string{"grant": args[1]})
				if _, err := eventsCall(ctx, e, args[0], "events.revoke", args0); err != nil {
					return err
				}
				_, err := fmt.Fprintf(e.out, "Revoked grant %s of background session %s.\n", sanitizeLine(args[1]), sanitizeLine(args[0]))
				return err
			}
		},
	}
}

func eventsCall(ctx context.Context, e *env, id, op string, args json.RawMessage) (json.RawMessage, error) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := agent.ControlCall(cctx, agent.RunDir(e.home, os.LookupEnv), id, agent.ControlRequest{Op: op, Args: args})
	if err != nil {
		return nil, err
	}
	if !resp.OK {
		return nil, fmt.Errorf("background session %s: %s", id, resp.Error)
	}
	return resp.Data, nil
}
