package ticketdoc

// The helpers that ticketdoc_test checks directly, beside what they print.
var (
	When   = when
	CP1252 = cp1252
)

// Waiting is how many requests wait for the render of o's current version.
func (c *PDFCache) Waiting(o *Order) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f := c.flights[o.Reference+"\x00"+Version(o)]; f != nil {
		return f.waiters
	}
	return 0
}
