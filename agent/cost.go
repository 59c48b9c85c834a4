package agent

// /cost (docs/reference/runtime.md, "Usage and cost"): the tokens of each
// turn (input, output, cache reads and writes) with the provider and model
// it ran with, in the transcript's turn records and, summed by model, in
// every compaction boundary; priced where the model's price is known
// (the settings' modelPrices, else the built-in table).

import (
	"fmt"
	"strings"
	"sync"
	"text/tabwriter"

	"agent/config"
	"agent/providers"
	"agent/providers/builtin"
)

// TurnCost is one turn's usage and what it ran with.
type TurnCost struct {
	Turn            string
	Provider, Model string
	Usage           providers.Usage
	// Agent is set for a subagent's turn, counted in its parent's turn.
	Agent string
}

// usageRecord in the transcript: a subagent's turn, in its parent's.
type agentUsageRecord struct {
	Type     string       `json:"type"` // "usage"
	Turn     string       `json:"turn"`
	Agent    string       `json:"agent"`
	Provider string       `json:"provider,omitempty"`
	Model    string       `json:"model,omitempty"`
	Usage    *usageRecord `json:"usage"`
}

// addCost counts a turn's usage: a subagent's in its parent's ledger and
// transcript, under the parent's running turn.
func (s *Session) addCost(tc TurnCost) {
	p := s.opts.Parent
	if p == nil {
		s.cost.add(tc)
		return
	}
	if tc.Usage == (providers.Usage{}) {
		return
	}
	p.cp.mu.Lock()
	tc.Agent, tc.Turn = s.id, p.cp.cur
	p.cp.mu.Unlock()
	p.cost.add(tc)
	if p.opts.Transcript != nil {
		if err := p.opts.Transcript.write(agentUsageRecord{Type: "usage", Turn: tc.Turn, Agent: tc.Agent, Provider: tc.Provider, Model: tc.Model, Usage: newUsageRecord(tc.Usage)}); err != nil {
			p.log.Warn("transcript", "err", err)
		}
	}
}

// ModelUsage is the usage of several turns of one provider and model.
type ModelUsage struct {
	Provider string          `json:"provider"`
	Model    string          `json:"model"`
	Turns    int             `json:"turns"`
	Usage    providers.Usage `json:"tokens"`
}

// maxLedgerTurns bounds the turns a session lists one by one; older ones
// are summed by model.
const maxLedgerTurns = 1000

// costLedger is a session's usage: the turns it lists, and the earlier
// ones summed by model.
type costLedger struct {
	mu      sync.Mutex
	earlier []ModelUsage
	turns   []TurnCost
}

func (l *costLedger) add(tc TurnCost) {
	if tc.Usage == (providers.Usage{}) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.turns = append(l.turns, tc)
	if len(l.turns) > maxLedgerTurns {
		old := l.turns[0]
		l.earlier = addModelUsage(l.earlier, old.Provider, old.Model, 1, old.Usage)
		l.turns = append(l.turns[:0:0], l.turns[1:]...)
	}
}

func addModelUsage(list []ModelUsage, provider, model string, turns int, u providers.Usage) []ModelUsage {
	for i := range list {
		if list[i].Provider == provider && list[i].Model == model {
			list[i].Turns += turns
			addUsage(&list[i].Usage, u)
			return list
		}
	}
	return append(list, ModelUsage{Provider: provider, Model: model, Turns: turns, Usage: u})
}

// byModel is every turn's usage summed by model (a boundary's record).
func (l *costLedger) byModel() []ModelUsage {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]ModelUsage, 0, len(l.earlier)+1)
	for _, m := range l.earlier {
		out = addModelUsage(out, m.Provider, m.Model, m.Turns, m.Usage)
	}
	for _, t := range l.turns {
		out = addModelUsage(out, t.Provider, t.Model, 1, t.Usage)
	}
	return out
}

func (l *costLedger) snapshot() ([]ModelUsage, []TurnCost) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]ModelUsage(nil), l.earlier...), append([]TurnCost(nil), l.turns...)
}

// Price is a model's price in US dollars per million tokens.
type Price = builtin.Price

// ModelPrice is the price of a provider's model: the settings'
// modelPrices entry for the model, else the built-in table.
func ModelPrice(provider, model string, s *config.Settings) (Price, bool) {
	if s != nil {
		if p, ok := s.Context.Prices[model]; ok {
			return Price{Input: p.Input, Output: p.Output, CacheRead: p.CacheRead, CacheWrite: p.CacheWrite}, true
		}
	}
	return builtin.ModelPrice(provider, model)
}

// Cost is what usage costs at a price, in US dollars. Input counts the
// whole prompt, the cache's reads and writes included
// (docs/providers.md, "Prompt caching").
func Cost(u providers.Usage, p Price) float64 {
	uncached := max(u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens, 0)
	return (float64(uncached)*p.Input + float64(u.CacheReadTokens)*p.CacheRead +
		float64(u.CacheWriteTokens)*p.CacheWrite + float64(u.OutputTokens)*p.Output) / 1e6
}

// costTurnsShown is how many of the newest turns /cost lists one by one.
const costTurnsShown = 20

// CostReport is /cost: the tokens of each turn and in total, with the
// price where the model's is known.
func (c *WorkspaceSession) CostReport() string {
	earlier, turns := c.Session.cost.snapshot()
	return costReport(earlier, turns, func(provider, model string) (Price, bool) { return ModelPrice(provider, model, c.Settings) })
}

func costReport(earlier []ModelUsage, turns []TurnCost, price func(provider, model string) (Price, bool)) string {
	if len(earlier) == 0 && len(turns) == 0 {
		return "No model call has reported its usage in this session yet.\n"
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "turn\tmodel\tinput\toutput\tcache read\tcache write\tcost\t")
	var total providers.Usage
	var dollars float64
	var unpriced []string
	row := func(label, provider, model string, u providers.Usage) {
		addUsage(&total, u)
		cost := "—"
		if p, ok := price(provider, model); ok {
			d := Cost(u, p)
			dollars += d
			cost = dollarsText(d)
		} else if name := modelName(provider, model); !contains(unpriced, name) {
			unpriced = append(unpriced, name)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", label, modelName(provider, model), count(u.InputTokens), count(u.OutputTokens),
			count(u.CacheReadTokens), count(u.CacheWriteTokens), cost)
	}
	for _, m := range earlier {
		row(fmt.Sprintf("%d earlier", m.Turns), m.Provider, m.Model, m.Usage)
	}
	hidden := max(len(turns)-costTurnsShown, 0)
	if hidden > 0 {
		var sum []ModelUsage
		for _, t := range turns[:hidden] {
			sum = addModelUsage(sum, t.Provider, t.Model, 1, t.Usage)
		}
		for _, m := range sum {
			row(fmt.Sprintf("%d older", m.Turns), m.Provider, m.Model, m.Usage)
		}
	}
	for _, t := range turns[hidden:] {
		n, _ := turnNumber(t.Turn)
		label := fmt.Sprint(n)
		if t.Agent != "" {
			label += " agent"
		}
		row(label, t.Provider, t.Model, t.Usage)
	}
	cost := dollarsText(dollars)
	if len(unpriced) > 0 {
		cost += " + unknown"
	}
	fmt.Fprintf(tw, "total\t\t%s\t%s\t%s\t%s\t%s\t\n", count(total.InputTokens), count(total.OutputTokens),
		count(total.CacheReadTokens), count(total.CacheWriteTokens), cost)
	tw.Flush()
	b.WriteString("Input counts the whole prompt, cache reads and writes included; output includes reasoning.\n")
	if len(unpriced) > 0 {
		fmt.Fprintf(&b, "No price is known for %s: add it to modelPrices in the settings to see its cost.\n", strings.Join(unpriced, ", "))
	}
	return b.String()
}

func modelName(provider, model string) string {
	switch {
	case provider == "":
		return model
	case model == "":
		return provider
	}
	return provider + "/" + model
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// count is a token count with thousands separators.
func count(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// dollarsText shows an amount with the precision small amounts need.
func dollarsText(d float64) string {
	if d < 1 {
		return fmt.Sprintf("$%.4f", d)
	}
	return fmt.Sprintf("$%.2f", d)
}
