package mysql

// SetMinEventRows sets the fewest rows a unit sends as rows events, for
// tests of units smaller than a real one, and returns the undo.
func SetMinEventRows(n int) (undo func()) {
	old := minEventRows
	minEventRows = n
	return func() { minEventRows = old }
}
