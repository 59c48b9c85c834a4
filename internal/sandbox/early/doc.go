// Package early starts the sandbox helper of `agent sandbox run` while the
// agent is still initialising.
//
// The one-shot command's cost is mostly two program starts: the agent's
// and its helper's (docs/performance.md, "Sandbox"). Started from main,
// the helper would begin its own start only once the agent's packages have
// initialised; started from this package's init, which imports little (os,
// sync, syscall, unsafe) and so runs among the first, the two starts overlap, and so do
// the helper's start and the agent's reading of its settings. The package
// reads the command line, starts the helper with the namespaces the
// machine's support calls for and the default network mode, and keeps it
// for the sandbox package, which uses it when its policy needs those
// namespaces and ends it otherwise (docs/design.md, "agent sandbox run
// starts its helper at init").
//
// The package also holds the probes of what the machine offers that need
// nothing but syscall (LandlockABI, MountsAllowed, NamespacesRefused), so
// that the early start and the sandbox package's spawns decide alike.
package early
