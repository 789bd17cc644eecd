/* Shows what geo-kit gives a C consumer: the shapes plugin registered (an archive kept whole),
   the header-only units, the compat header found through geo-kit's cflags, tinyhash linked. */
#include <stdio.h>

#include <geokit/geokit.h>
#include <geokit/units.h>
#include <geokit_compat.h>

int main(void) {
  const gk_point triangle[] = {{0, 0}, {4, 0}, {0, 3}};
  printf("shapes=%d triangle=%g right=%g compat=%d id=%016llx\n", gk_shape_count(),
         gk_shape_area("triangle", triangle, 3), gk_rad_to_deg(gk_deg_to_rad(90.0)),
         GEOKIT_COMPAT_LEVEL, (unsigned long long)gk_shape_id("triangle"));
  return 0;
}
