package store_test

import "github.com/bullpen-hq/bullpen"

// testKinds are declared event kinds visible to everyone, for the tests
// of the event log itself: the store refuses a kind nobody declared
// (visibility.go), and a writer may narrow an everyone kind's audience.
var testKinds = []string{bullpen.EventMemberUpdated, bullpen.EventWikiPageSaved, bullpen.EventWikiPageDeleted}

// testKind is the first of testKinds.
var testKind = testKinds[0]
