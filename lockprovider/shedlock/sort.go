package shedlock

import (
	"slices"
	"strings"

	"github.com/baton-go/baton/batontype"
)

func sortInfos(infos []batontype.LeaseInfo) {
	slices.SortFunc(infos, func(a, b batontype.LeaseInfo) int { return strings.Compare(a.Name, b.Name) })
}
