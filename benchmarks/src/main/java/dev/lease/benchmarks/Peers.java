package dev.lease.benchmarks;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import javax.sql.DataSource;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.integration.redis.util.RedisLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.integration.zookeeper.lock.ZookeeperLockRegistry;
import org.springframework.jdbc.core.JdbcTemplate;

import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import net.javacrumbs.shedlock.provider.redis.spring.RedisLockProvider;

/**
 * The libraries users would pick instead, each used the way its documentation shows, over the same clients and
 * servers as ours. Each factory call stands for one application instance.
 */
final class Peers {

    private Peers() {
    }

    /** Curator's {@link InterProcessMutex}, one per lock name per instance, as the recipe is meant to be used. */
    static Locker curator(CuratorFramework client) {
        java.util.Map<String, InterProcessMutex> mutexes = new java.util.concurrent.ConcurrentHashMap<>();
        return key -> {
            InterProcessMutex mutex = mutexes.computeIfAbsent(key, k -> new InterProcessMutex(client, "/curator/" + k));
            if (!mutex.acquire(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("Curator mutex " + key + " not acquired in 30 s");
            }
            return mutex::release;
        };
    }

    static Locker registry(LockRegistry registry) {
        return key -> {
            Lock lock = registry.obtain(key);
            if (!lock.tryLock(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException(registry.getClass().getSimpleName() + " " + key + " not locked in 30 s");
            }
            return lock::unlock;
        };
    }

    static Locker springIntegrationZookeeper(CuratorFramework client) {
        return registry(new ZookeeperLockRegistry(client, "/si-locks"));
    }

    static Locker springIntegrationRedis(RedisConnectionFactory factory) {
        return registry(new RedisLockRegistry(factory, "si-locks", Duration.ofSeconds(10)));
    }

    static Locker springIntegrationJdbc(DataSource dataSource) {
        DefaultLockRepository repository = new DefaultLockRepository(dataSource);
        repository.setTimeToLive(10_000);
        repository.setTransactionManager(new org.springframework.jdbc.support.JdbcTransactionManager(dataSource));
        repository.afterPropertiesSet();
        repository.afterSingletonsInstantiated();
        return registry(new JdbcLockRegistry(repository));
    }

    /** Redisson's {@link RLock} with its watchdog (no lease time), the usual way. */
    static Locker redisson(int port, java.util.List<AutoCloseable> closeables) {
        Config config = new Config();
        config.useSingleServer().setAddress("redis://127.0.0.1:" + port);
        RedissonClient client = Redisson.create(config);
        closeables.add(client::shutdown);
        return key -> {
            RLock lock = client.getLock("redisson:" + key);
            lock.lock();
            return lock::unlock;
        };
    }

    static Locker shedLock(LockProvider provider) {
        return new Locker() {
            @Override
            public Held acquire(String key) {
                SimpleLock lock = provider.lock(new LockConfiguration(Instant.now(), key, Duration.ofSeconds(10),
                        Duration.ZERO)).orElseThrow(() -> new IllegalStateException("ShedLock " + key + " busy"));
                return lock::unlock;
            }

            @Override
            public boolean canWait() {
                return false;
            }
        };
    }

    static Locker shedLockRedis(RedisConnectionFactory factory) {
        return shedLock(new RedisLockProvider(factory, "bench"));
    }

    static Locker shedLockJdbc(DataSource dataSource) {
        JdbcTemplate jdbc = new JdbcTemplate(dataSource);
        jdbc.execute("CREATE TABLE IF NOT EXISTS shedlock(name VARCHAR(64) NOT NULL, lock_until TIMESTAMP NOT NULL, "
                + "locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))");
        return shedLock(new JdbcTemplateLockProvider(JdbcTemplateLockProvider.Configuration.builder()
                .withJdbcTemplate(jdbc).usingDbTime().build()));
    }

    /** Spring Integration's lock table, from the DDL its jar ships for PostgreSQL. */
    static void createSpringIntegrationTable(DataSource dataSource) {
        new JdbcTemplate(dataSource).execute("CREATE TABLE IF NOT EXISTS INT_LOCK (LOCK_KEY CHAR(36) NOT NULL, "
                + "REGION VARCHAR(100) NOT NULL, CLIENT_ID CHAR(36), CREATED_DATE TIMESTAMP NOT NULL, "
                + "EXPIRED_AFTER TIMESTAMP NOT NULL, constraint INT_LOCK_PK primary key (LOCK_KEY, REGION))");
    }
}
