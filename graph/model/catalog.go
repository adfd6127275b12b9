// Package model holds the API's resource types. gqlgen binds the GraphQL
// schema to them and REST encodes them as JSON: the snake_case tags are the
// field names of the REST contract, so both APIs show the same values.
package model

// Event is spec section 2.1.
type Event struct {
	ID                   int             `json:"id"`
	Reference            string          `json:"reference"`
	Name                 string          `json:"name"`
	Slug                 string          `json:"slug"`
	Description          *string         `json:"description"`
	ImageURL             *string         `json:"image_url"`
	ActiveDatesCount     int             `json:"active_dates_count"`
	HasMultipleDates     bool            `json:"has_multiple_dates"`
	USSDCode             *string         `json:"ussd_code"`
	USSDFullCode         *string         `json:"ussd_full_code"`
	HasUSSD              bool            `json:"has_ussd"`
	NextStartdate        *string         `json:"next_startdate"`
	LastEnddate          *string         `json:"last_enddate"`
	NextStartdateISO     *string         `json:"next_startdate_iso"`
	LastEnddateISO       *string         `json:"last_enddate_iso"`
	NextStartdateDisplay *string         `json:"next_startdate_display"`
	LastEnddateDisplay   *string         `json:"last_enddate_display"`
	Timezone             string          `json:"timezone"`
	CreatedAt            string          `json:"created_at"`
	UpdatedAt            string          `json:"updated_at"`
	Pricing              *PricingSummary `json:"pricing"`
}

// PricingSummary is the pricing object of an Event.
type PricingSummary struct {
	HasFreeTickets bool `json:"has_free_tickets"`
	HasPaidTickets bool `json:"has_paid_tickets"`
	IsEntirelyFree bool `json:"is_entirely_free"`
}

// EventPage is one page of events (REST: data plus meta).
type EventPage struct {
	Nodes    []*Event     `json:"data"`
	PageInfo *PageNumbers `json:"-"`
	Timezone string       `json:"-"`
}

// PageNumbers describes the page of an EventPage. It is not Relay's
// PageInfo, whose name cursor connections keep for themselves.
type PageNumbers struct {
	Page       int  `json:"page"`
	PerPage    int  `json:"per_page"`
	Total      int  `json:"total"`
	TotalPages int  `json:"total_pages"`
	HasNext    bool `json:"has_next"`
	HasPrev    bool `json:"has_prev"`
}

// EventDate is spec section 2.2; the venue fields are flattened as REST
// shows them, and GraphQL also offers the venue object.
type EventDate struct {
	ID               int      `json:"id"`
	Reference        string   `json:"reference"`
	EventID          int      `json:"event_id"`
	Startdate        string   `json:"startdate"`
	Enddate          string   `json:"enddate"`
	StartdateISO     *string  `json:"startdate_iso"`
	EnddateISO       *string  `json:"enddate_iso"`
	StartdateDisplay *string  `json:"startdate_display"`
	EnddateDisplay   *string  `json:"enddate_display"`
	Online           bool     `json:"online"`
	VenueID          *int     `json:"venue_id"`
	VenueName        *string  `json:"venue_name"`
	VenueSlug        *string  `json:"venue_slug"`
	VenueStreet      *string  `json:"venue_street"`
	VenueCity        *string  `json:"venue_city"`
	VenueState       *string  `json:"venue_state"`
	VenueLat         *float64 `json:"venue_lat"`
	VenueLng         *float64 `json:"venue_lng"`
	Timezone         string   `json:"timezone"`
	// Cancelled is set once the operator cancelled the date
	// (docs/spec/refunds.md section 5): nothing of it is sold.
	Cancelled bool `json:"cancelled"`
}

// Venue is where a date happens.
type Venue struct {
	ID        int      `json:"id"`
	Reference string   `json:"reference"`
	Name      string   `json:"name"`
	Slug      string   `json:"slug"`
	Street    *string  `json:"street"`
	City      *string  `json:"city"`
	State     *string  `json:"state"`
	Lat       *float64 `json:"lat"`
	Lng       *float64 `json:"lng"`
}

// Ticket is spec section 2.3: what the catalog says of a ticket type,
// shared by every answer while the catalog is unchanged, and its live
// availability, the one field each answer reads anew. An answer's tickets
// are these two words each, not copies of the ticket.
type Ticket struct {
	*TicketInfo
	QuantityAvailable int `json:"quantity_available"`
}

// TicketInfo is a ticket type as the catalog describes it.
type TicketInfo struct {
	ID                 int     `json:"id"`
	Reference          string  `json:"reference"`
	EventdateID        int     `json:"eventdate_id"`
	Name               string  `json:"name"`
	Description        *string `json:"description"`
	Free               bool    `json:"free"`
	Price              *string `json:"price"`
	Promotionalprice   *string `json:"promotionalprice"`
	Quantity           *int    `json:"quantity"`
	Ticketsperattendee *int    `json:"ticketsperattendee"`
	Salesstartdate     *string `json:"salesstartdate"`
	Salesenddate       *string `json:"salesenddate"`
	SalesstartdateISO  *string `json:"salesstartdate_iso"`
	SalesenddateISO    *string `json:"salesenddate_iso"`
	Currency           string  `json:"currency"`
	CurrencySymbol     string  `json:"currency_symbol"`
	IsFree             bool    `json:"is_free"`
	EffectivePrice     string  `json:"effective_price"`
	RequiresPayment    bool    `json:"requires_payment"`
	Timezone           string  `json:"timezone"`
}

// PriceMoney is Ticket.priceMoney: Price with its currency.
func (t *Ticket) PriceMoney() *Money { return NewMoney(t.Price, t.Currency) }

// PromotionalPriceMoney is Ticket.promotionalPriceMoney.
func (t *Ticket) PromotionalPriceMoney() *Money { return NewMoney(t.Promotionalprice, t.Currency) }

// EffectivePriceMoney is Ticket.effectivePriceMoney.
func (t *Ticket) EffectivePriceMoney() *Money { return NewMoney(&t.EffectivePrice, t.Currency) }
