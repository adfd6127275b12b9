package model

// Performance is written by hand, not by gqlgen, for a field of the
// shape gqlgen writes for an int64 Int (the contract types of
// checkout, tickets and checkin hold their counts as int64).
type Performance struct {
	ID       string
	StartsAt string
	SoldOut  bool
	Row      int64
}
