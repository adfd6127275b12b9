package seed

import (
	"fmt"
	"time"

	"github.com/boxoffice/boxoffice/catalog"
)

// DemoCatalog returns the demo catalog with its dates placed relative to
// now, in Africa/Accra (UTC+0 all year).
func DemoCatalog(now time.Time) *catalog.File {
	accra, _ := time.LoadLocation(catalog.DefaultTimezone)
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, accra)
	at := func(days, hour, minute int) *string {
		s := day.AddDate(0, 0, days).Add(time.Duration(hour)*time.Hour + time.Duration(minute)*time.Minute).UTC().Format(time.RFC3339)
		return &s
	}
	str := func(s string) *string { return &s }
	num := func(n int64) *int64 { return &n }
	f64 := func(f float64) *float64 { return &f }
	date := func(ref string, startDay, startHour, hours int, venue string, tickets ...catalog.TicketSpec) catalog.DateSpec {
		start := at(startDay, startHour, 0)
		end := at(startDay, startHour+hours, 0)
		d := catalog.DateSpec{Reference: ref, Start: *start, End: *end, Tickets: tickets}
		if venue == "" {
			d.Online = true
		} else {
			d.Venue = str(venue)
		}
		return d
	}
	paid := func(ref, name, price string, promo *string, qty, sold int64, perAttendee int64) catalog.TicketSpec {
		return catalog.TicketSpec{
			Reference: ref, Name: name, Price: str(price), PromotionalPrice: promo,
			Quantity: num(qty), Sold: sold, TicketsPerAttendee: num(perAttendee), Currency: "GHS",
		}
	}
	free := func(ref, name string, qty *int64, perAttendee int64) catalog.TicketSpec {
		return catalog.TicketSpec{
			Reference: ref, Name: name, Free: true, Price: str("0.00"),
			Quantity: qty, TicketsPerAttendee: num(perAttendee), Currency: "GHS",
		}
	}
	event := func(ref, name, slug, desc string, dates ...catalog.DateSpec) catalog.EventSpec {
		return catalog.EventSpec{
			Reference: ref, Name: name, Slug: slug, Description: str(desc),
			ImageURL: str(fmt.Sprintf("https://images.boxoffice.example/events/%s.jpg", slug)),
			Timezone: catalog.DefaultTimezone, Published: true, Dates: dates,
		}
	}

	highlife := event("DEMO-HIGHLIFE", "Highlife Night at the Conference Centre", "highlife-night",
		"An evening of classic and new-wave highlife with a twelve-piece band and guest vocalists.",
		date("DEMO-HIGHLIFE-1", 14, 19, 5, "demo-aicc",
			paid("DEMO-HIGHLIFE-REG", "Regular", "150.00", str("120.00"), 800, 214, 10),
			paid("DEMO-HIGHLIFE-VIP", "VIP table seat", "450.00", nil, 60, 12, 6),
		))
	highlife.USSDCode, highlife.USSDFullCode = str("33"), str("*713*33#")

	chalewote := event("DEMO-CHALEWOTE", "Chale Wote Street Art Festival", "chale-wote-street-art",
		"Three days of murals, performance art and street parades through James Town. Free to attend; register for a wristband.",
		date("DEMO-CHALEWOTE-1", 21, 10, 10, "demo-jamestown", free("DEMO-CHALEWOTE-1-GA", "Free wristband — day 1", num(3000), 4)),
		date("DEMO-CHALEWOTE-2", 22, 10, 10, "demo-jamestown", free("DEMO-CHALEWOTE-2-GA", "Free wristband — day 2", num(3000), 4)),
		date("DEMO-CHALEWOTE-3", 23, 10, 10, "demo-jamestown", free("DEMO-CHALEWOTE-3-GA", "Free wristband — day 3", num(3000), 4)),
	)

	summit := event("DEMO-TECHSUMMIT", "Accra Tech Summit", "accra-tech-summit",
		"Talks and workshops on payments, mobile money and building for West African markets. Day two is streamed online.",
		date("DEMO-TECHSUMMIT-1", 30, 9, 8, "demo-labadi",
			free("DEMO-TECHSUMMIT-1-STUDENT", "Student pass", num(150), 1),
			paid("DEMO-TECHSUMMIT-1-STD", "Standard pass", "250.00", nil, 400, 37, 5),
			paid("DEMO-TECHSUMMIT-1-EARLY", "Early bird", "250.00", str("175.00"), 100, 100, 5),
		),
		date("DEMO-TECHSUMMIT-2", 31, 9, 8, "",
			free("DEMO-TECHSUMMIT-2-STREAM", "Livestream access", nil, 1),
		),
	)
	summit.USSDCode, summit.USSDFullCode = str("41"), str("*713*41#")

	comedy := event("DEMO-COMEDY", "Laugh Out Loud Comedy Special", "laugh-out-loud-comedy",
		"Ghana's favourite stand-up comedians in one night. Sold out — watch for released tickets.",
		date("DEMO-COMEDY-1", 9, 20, 3, "demo-national-theatre",
			paid("DEMO-COMEDY-REG", "Regular", "100.00", nil, 300, 300, 4),
			paid("DEMO-COMEDY-VIP", "VIP", "250.00", nil, 50, 50, 2),
		))

	jazz := event("DEMO-JAZZ", "Kumasi Jazz Evening", "kumasi-jazz-evening",
		"Live jazz under the stars in the Garden City. Ticket sales open a week before the show.",
		date("DEMO-JAZZ-1", 40, 18, 4, "demo-baba-yara",
			catalog.TicketSpec{
				Reference: "DEMO-JAZZ-GA", Name: "General admission", Price: str("80.00"),
				Quantity: num(1000), TicketsPerAttendee: num(8), Currency: "GHS",
				SalesStart: at(33, 9, 0), SalesEnd: at(40, 17, 0),
			},
		))

	movies := event("DEMO-MOVIES", "Saturday Cinema Club", "saturday-cinema-club",
		"A classic Ghanaian film every Saturday, with popcorn. Pick a date.",
		date("DEMO-MOVIES-1", 6, 16, 3, "demo-national-theatre", paid("DEMO-MOVIES-1-SEAT", "Seat", "40.00", str("30.00"), 200, 40, 6)),
		date("DEMO-MOVIES-2", 13, 16, 3, "demo-national-theatre", paid("DEMO-MOVIES-2-SEAT", "Seat", "40.00", nil, 200, 5, 6)),
		date("DEMO-MOVIES-3", 20, 16, 3, "demo-national-theatre", paid("DEMO-MOVIES-3-SEAT", "Seat", "40.00", nil, 200, 0, 6)),
		date("DEMO-MOVIES-0", -7, 16, 3, "demo-national-theatre", paid("DEMO-MOVIES-0-SEAT", "Seat", "40.00", nil, 200, 187, 6)),
	)

	past := event("DEMO-PAST", "Homowo Harvest Concert", "homowo-harvest-concert",
		"Last season's harvest concert. Kept for the record: list it with include_past=true.",
		date("DEMO-PAST-1", -30, 18, 4, "demo-aicc", paid("DEMO-PAST-REG", "Regular", "60.00", nil, 500, 481, 10)))

	gala := event("DEMO-GALA", "Founders' Charity Gala", "founders-charity-gala",
		"An invitation-only dinner. Listed for reference; checkout is refused because the event is private.",
		date("DEMO-GALA-1", 45, 19, 5, "demo-labadi", paid("DEMO-GALA-SEAT", "Dinner seat", "1200.00", nil, 120, 0, 2)))
	gala.Private = true

	hidden := event("DEMO-HIDDEN", "Staff Rehearsal", "staff-rehearsal",
		"Hidden from listings: partners never see it.",
		date("DEMO-HIDDEN-1", 5, 10, 2, "demo-aicc", free("DEMO-HIDDEN-GA", "Crew", num(20), 1)))
	hidden.HiddenFromListings = true

	draft := event("DEMO-DRAFT", "Afrobeats All-Nighter (draft)", "afrobeats-all-nighter",
		"Not yet published.",
		date("DEMO-DRAFT-1", 60, 22, 6, "demo-jamestown", paid("DEMO-DRAFT-GA", "General admission", "200.00", nil, 2000, 0, 10)))
	draft.Published = false

	return &catalog.File{
		Venues: []catalog.VenueSpec{
			{Reference: "demo-aicc", Name: "Accra International Conference Centre", Slug: "accra-international-conference-centre",
				Street: str("Castle Road"), City: str("Accra"), State: str("Greater Accra"), Lat: f64(5.5601), Lng: f64(-0.1969)},
			{Reference: "demo-national-theatre", Name: "National Theatre of Ghana", Slug: "national-theatre-of-ghana",
				Street: str("Liberia Road"), City: str("Accra"), State: str("Greater Accra"), Lat: f64(5.5557), Lng: f64(-0.2003)},
			{Reference: "demo-jamestown", Name: "James Town Lighthouse Grounds", Slug: "james-town-lighthouse",
				Street: str("High Street"), City: str("Accra"), State: str("Greater Accra"), Lat: f64(5.5330), Lng: f64(-0.2132)},
			{Reference: "demo-labadi", Name: "Labadi Beach Hotel", Slug: "labadi-beach-hotel",
				Street: str("1 La Bypass"), City: str("Accra"), State: str("Greater Accra"), Lat: f64(5.5600), Lng: f64(-0.1480)},
			{Reference: "demo-baba-yara", Name: "Baba Yara Sports Stadium", Slug: "baba-yara-sports-stadium",
				Street: str("Stadium Road"), City: str("Kumasi"), State: str("Ashanti"), Lat: f64(6.6836), Lng: f64(-1.6085)},
		},
		// Listed oldest first so the newest-first listing opens with the headline events.
		Events: []catalog.EventSpec{draft, hidden, past, gala, jazz, comedy, movies, summit, chalewote, highlife},
	}
}
