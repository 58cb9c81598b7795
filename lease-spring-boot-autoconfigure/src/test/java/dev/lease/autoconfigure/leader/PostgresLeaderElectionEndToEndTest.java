package dev.lease.autoconfigure.leader;

import static dev.lease.testing.TestTiming.seconds;

import java.time.Duration;
import java.util.List;

import javax.sql.DataSource;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

import dev.lease.testing.PostgresDatabase;
import dev.lease.testing.SharedDatabase;
import dev.lease.testing.TcpProxy;

class PostgresLeaderElectionEndToEndTest extends LeaderElectionEndToEndTest {

    @RegisterExtension
    static final SharedDatabase<PostgresDatabase> POSTGRES = SharedDatabase.postgres();

    @Override
    protected List<String> properties(TcpProxy link, Duration ttl) {
        return List.of("lease.backend=jdbc", "lease.jdbc.initialize-schema=always",
                "lease.default-ttl=" + ttl.toMillis() + "ms");
    }

    @Override
    protected void register(AnnotationConfigApplicationContext context, TcpProxy link) {
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setServerNames(new String[] {"localhost"});
        dataSource.setPortNumbers(new int[] {link.port()});
        dataSource.setDatabaseName(POSTGRES.get().name());
        dataSource.setUser("postgres");
        // A frozen link must not hold a store call forever: the lease is lost by its local deadline anyway.
        dataSource.setSocketTimeout((int) Math.max(1, seconds(5).toSeconds()));
        context.registerBean(DataSource.class, () -> dataSource);
    }

    @Override
    protected int storePort() {
        return POSTGRES.get().port();
    }

    @Override
    protected Duration shortTtl() {
        return seconds(3);
    }
}
