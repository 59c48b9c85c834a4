package agent

import "agent/config"

// ErrSettingsShape is wrapped when the local settings file is valid JSON
// but cannot take the rule (config.ErrSettingsShape).
var ErrSettingsShape = config.ErrSettingsShape

// AllowForProject records rule in permissions.allow of
// <workspace>/.agent/settings.local.json (config.LocalSettingsPath), the
// prompt answer "allow for this project" (docs/reference/runtime.md,
// "Permission prompts"; the answer itself is the constant AllowProject,
// hence this function's name).
//
// The file is changed by the one settings writer (config.UpdateSettingsFile):
// as text, so every other key, rule, formatting choice and byte stays as
// it was; the rule goes after the last entry, matching the indentation
// around it. A missing file (and .agent folder, mode 0700) is created with
// mode 0600; an existing file keeps its mode. The write is atomic. A rule
// already present is not added again. A file that is not valid JSON is
// never overwritten: the error names the file and the line and column. A
// symbolic link in place of the folder or the file is refused rather than
// followed out of the project.
func AllowForProject(workspace string, rule config.Rule) error {
	text := rule.String()
	if _, err := config.ParseRule(text); err != nil {
		return err
	}
	_, err := config.UpdateSettingsFile(config.LocalSettingsPath(workspace), config.KeepPerm, config.AppendUnique(text, "permissions", "allow"))
	return err
}
