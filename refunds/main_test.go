package refunds_test

import (
	"flag"
	"os"
	"testing"
)

// TestMain runs, when crashChild is set, the process TestSendSurvivesKill
// kills; otherwise the tests, rapid's properties with 25 cases each
// unless -rapid.checks says otherwise: every case of TestBalance makes and pays a real order,
// and 25 already walk every refusal and settlement the rule has; a deeper
// search is one flag away.
func TestMain(m *testing.M) {
	if os.Getenv(crashChild) != "" {
		os.Exit(runCrashChild())
	}
	flag.Parse()
	checks := false
	flag.Visit(func(f *flag.Flag) { checks = checks || f.Name == "rapid.checks" })
	if !checks {
		_ = flag.Set("rapid.checks", "25")
	}
	os.Exit(m.Run())
}
