package dev.lease.fence.jpa;

/** {@link JpaCollectionAndDeleteFenceTest} on H2, in memory. */
class H2JpaCollectionAndDeleteFenceTest extends JpaCollectionAndDeleteFenceTest {

    @Override
    String jdbcUrl() {
        return "jdbc:h2:mem:jpa-fence-collections;DB_CLOSE_DELAY=-1";
    }
}
