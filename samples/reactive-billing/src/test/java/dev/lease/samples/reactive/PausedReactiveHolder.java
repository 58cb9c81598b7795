package dev.lease.samples.reactive;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

import io.r2dbc.postgresql.PostgresqlConnectionConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import dev.lease.FencingToken;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.fence.R2dbcFence;
import dev.lease.fence.StaleTokenException;
import dev.lease.reactive.ReactiveGrantFence;
import dev.lease.reactive.ReactiveLeaseTemplate;
import dev.lease.zookeeper.ZooKeeperLeaseBackend;

/**
 * The holder that gets paused for real ({@code kill -STOP}), in a JVM of its own: a reactive section on ZooKeeper
 * with R2DBC, as the application runs it. Protocol on stdin/stdout: it takes invoice N's lease (fenced at grant) and
 * prints {@code READY token=T}; on the line {@code WRITE} it sends the billing write with token T at once, checking
 * nothing first, as a pipeline that a pause caught between its check and its write would, and prints
 * {@code ACCEPTED} or {@code REJECTED current=M}. When its section learns of the loss it prints {@code LOST}.
 *
 * <p>Arguments: ZooKeeper connect string, PostgreSQL port, invoice id.
 */
public final class PausedReactiveHolder {

    static final Duration SESSION = Duration.ofSeconds(6);

    private PausedReactiveHolder() {
    }

    public static void main(String[] args) throws Exception {
        long id = Long.parseLong(args[2]);
        String resource = "invoice-" + id;
        CuratorFramework curator = CuratorFrameworkFactory.builder().connectString(args[0])
                .sessionTimeoutMs((int) SESSION.toMillis()).retryPolicy(new RetryOneTime(100)).build();
        curator.start();
        ZooKeeperLeaseBackend backend = new ZooKeeperLeaseBackend(curator, "/leases", SESSION);
        LeaseEngine engine = new LeaseEngine(BackendRouter.of(Map.of(LeaseKind.CORRECTNESS, backend)),
                new LeaseDefaults(SESSION, null));
        DatabaseClient db = DatabaseClient.create(new PostgresqlConnectionFactory(PostgresqlConnectionConfiguration
                .builder().host("localhost").port(Integer.parseInt(args[1])).username("postgres").database("postgres")
                .build()));
        R2dbcFence fence = new R2dbcFence(db);
        TransactionalOperator transactions = TransactionalOperator.create(
                new R2dbcTransactionManager(db.getConnectionFactory()));
        ReactiveLeaseTemplate leases = new ReactiveLeaseTemplate(engine,
                ReactiveGrantFence.of(fence::advanceAtGrant, fence::advanceOnReentry));
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        // A first connection of a cold JVM (driver, Netty, authentication) took longer than the session on a loaded
        // machine, and the fence at grant, bounded by the lease's validity, gave up: connect before the lease.
        db.sql("SELECT 1").fetch().rowsUpdated().block(Duration.ofSeconds(60));

        leases.execute(LeaseSpec.of(resource, LeaseKind.CORRECTNESS).withFence(resource), lease -> {
            FencingToken token = lease.token();
            say("READY token=" + token.value());
            return Mono.fromCallable(stdin::readLine).subscribeOn(Schedulers.boundedElastic())
                    .doOnNext(line -> write(db, fence, transactions, id, token))
                    .then(Mono.never());
        }).subscribe(done -> { }, error -> say(error instanceof LeaseLostException ? "LOST" : "FAILED " + error));
        Thread.sleep(Long.MAX_VALUE);
    }

    /** Not part of the section: a write already on its way when the pause struck is not cancelled by anything. */
    private static void write(DatabaseClient db, R2dbcFence fence, TransactionalOperator transactions, long id,
            FencingToken token) {
        fence.advance(token.lease(), token)
                .then(db.sql("UPDATE invoice SET billed_token = :token WHERE id = :id").bind("token", token.value())
                        .bind("id", id).then())
                .as(transactions::transactional)
                .subscribe(null, error -> say(error instanceof StaleTokenException stale
                        ? "REJECTED current=" + stale.current() : "FAILED " + error), () -> say("ACCEPTED"));
    }

    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
