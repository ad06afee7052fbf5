package notify

// desktop finds the platform's own notifier by the command it provides, not by naming the OS:
// notify-send talks to the freedesktop notification service over D-Bus (Linux, BSDs);
// osascript's `display notification` is macOS's. "" when neither is installed.
func (n *Notifier) desktop() (string, func(title, text string) []string) {
	if p, err := n.opts.LookPath("notify-send"); err == nil {
		return "notify-send", func(title, text string) []string {
			return []string{p, "--app-name=mosh", title, text}
		}
	}
	if p, err := n.opts.LookPath("osascript"); err == nil {
		return "osascript", func(title, text string) []string {
			return []string{p, "-e", "on run argv", "-e", "display notification (item 2 of argv) with title (item 1 of argv)", "-e", "end run", title, text}
		}
	}
	return "", nil
}

// Desktop names the desktop notifier available ("" when none), for doctor.
func (n *Notifier) Desktop() string {
	name, _ := n.desktop()
	return name
}
