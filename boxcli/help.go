package boxcli

import (
	"strings"

	"github.com/urfave/cli/v3"
)

// commandGlobals names the global options (globalFlags) each command reads,
// which are the only ones its --help lists: serve reads them all, a
// command that prints or calls the server's URLs reads --addr and
// --public-base-url (the first is the second's default), and a command not
// named here reads --database-url alone.
var commandGlobals = map[string][]string{
	"listen":              {"addr", "public-base-url"},
	"healthcheck":         {"addr"},
	"seed demo":           {"database-url", "addr", "public-base-url"},
	"accounts reset-link": {"database-url", "addr", "public-base-url", "portal-reset-ttl"},
	"apps create":         {"database-url", "webhook-allow-private-targets", "max-apps-per-account"},
	"apps update":         {"database-url", "webhook-allow-private-targets"},
	"scanners create":     {"database-url", "addr", "public-base-url"},
	"orders list":         {"database-url", "addr", "public-base-url"},
	"orders show":         {"database-url", "addr", "public-base-url"},
	"orders expire":       {"database-url", "addr", "public-base-url"},
}

func init() {
	// urfave/cli shows a group's help, and a command's after a usage
	// error, with SubcommandHelpTemplate whatever CustomHelpTemplate says;
	// scopeHelp's templates must apply there too.
	cli.ShowSubcommandHelp = func(cmd *cli.Command) error {
		tmpl := cmd.CustomHelpTemplate
		if tmpl == "" {
			tmpl = cli.SubcommandHelpTemplate
		}
		cli.HelpPrinter(cmd.Root().Writer, tmpl, cmd)
		return nil
	}
}

// globalsSection is the GLOBAL OPTIONS section of urfave/cli's help
// templates, which lists every global option under every command.
const globalsSection = `{{if .VisiblePersistentFlags}}

GLOBAL OPTIONS:{{template "visiblePersistentFlagTemplate" .}}{{end}}`

// ownGlobals lists only the global options in the command's metadata,
// formatted as the section it replaces.
const ownGlobals = `{{if .Metadata.globals}}

GLOBAL OPTIONS:{{range .VisiblePersistentFlags}}{{if index $.Metadata.globals (index .Names 0)}}
   {{wrap .String 6}}{{end}}{{end}}{{end}}`

// rootGlobalsSection is the GLOBAL OPTIONS section of the root's help in
// urfave/cli's template.
const rootGlobalsSection = `{{if .VisibleFlagCategories}}

GLOBAL OPTIONS:{{template "visibleFlagCategoryTemplate" .}}{{else if .VisibleFlags}}

GLOBAL OPTIONS:{{template "visibleFlagTemplate" .}}{{end}}`

// rootGlobals lists the root's options named in its metadata, and says
// where the others are: `boxoffice --help` fits a screen, and the fifty
// options only serve reads are in serve's.
const rootGlobals = `

GLOBAL OPTIONS:{{range .VisibleFlags}}{{if index $.Metadata.globals (index .Names 0)}}
   {{wrap .String 6}}{{end}}{{end}}

Options are environment variables too; serve --help lists the server's, COMMAND --help a command's.`

// scopeHelp makes each command's --help list its own flags and only the
// global options it reads (commandGlobals); a group of commands lists none
// of them. serve keeps the full list; the root lists --database-url and
// points to serve's.
func scopeHelp(root *cli.Command) {
	if root.Metadata == nil {
		root.Metadata = map[string]any{}
	}
	root.Metadata["globals"] = map[string]bool{"database-url": true, "help": true}
	root.CustomRootCommandHelpTemplate = strings.Replace(cli.RootCommandHelpTemplate, rootGlobalsSection, rootGlobals, 1)
	for _, cmd := range root.Commands {
		scopeCommandHelp(cmd, cmd.Name)
	}
}

// scopeCommandHelp scopes the help of cmd, named name ("apps create"),
// and of its commands.
func scopeCommandHelp(cmd *cli.Command, name string) {
	switch {
	case name == "serve":
		return
	case len(cmd.Commands) > 0:
		cmd.CustomHelpTemplate = strings.Replace(cli.SubcommandHelpTemplate, globalsSection, "", 1)
		for _, sub := range cmd.Commands {
			scopeCommandHelp(sub, name+" "+sub.Name)
		}
		return
	}
	names, ok := commandGlobals[name]
	if !ok {
		names = []string{"database-url"}
	}
	globals := map[string]bool{}
	for _, n := range names {
		globals[n] = true
	}
	if cmd.Metadata == nil {
		cmd.Metadata = map[string]any{}
	}
	cmd.Metadata["globals"] = globals
	cmd.CustomHelpTemplate = strings.Replace(cli.CommandHelpTemplate, globalsSection, ownGlobals, 1)
}
