

aPlaceholder*
dtype0

bPlaceholder*
dtype0

sumAddab*
T0"