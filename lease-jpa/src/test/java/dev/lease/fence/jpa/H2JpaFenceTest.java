package dev.lease.fence.jpa;

/** {@link JpaFenceTest} on H2, in memory. */
class H2JpaFenceTest extends JpaFenceTest {

    @Override
    String jdbcUrl() {
        return "jdbc:h2:mem:jpa-fence;DB_CLOSE_DELAY=-1";
    }
}
