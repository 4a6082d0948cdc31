package shedlock

import (
	"slices"
	"strings"

	"github.com/baton-go/baton/lockprovider"
)

func sortInfos(infos []lockprovider.LeaseInfo) {
	slices.SortFunc(infos, func(a, b lockprovider.LeaseInfo) int { return strings.Compare(a.Name, b.Name) })
}
