package dev.lease.jdbc;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

import dev.lease.jdbc.JdbcLeaseBackend.JdbcGrant;

/**
 * Renews a batch in one {@code UPDATE} per distinct ttl (and per {@value #CHUNK} grants, to stay far below every
 * database's bind-parameter limit), all on one connection. Only when a statement's update count falls short of its
 * grants does one {@code SELECT} tell which of them are still held: the rest are lost. A short count is not yet a
 * loss: a driver counting changed rather than matched rows (MySQL's {@code useAffectedRows=true}) reports a renewal
 * that set the same {@code expires_at} as unchanged.
 */
final class BatchRenewal {

    /**
     * Most grants renewed by one statement: four bind parameters each, far below PostgreSQL's 32767 and MySQL's 65535,
     * and a statement text the servers parse quickly.
     */
    static final int CHUNK = 500;

    private final Autocommit calls;
    private final Supplier<LeaseStatements> statements;

    BatchRenewal(Autocommit calls, Supplier<LeaseStatements> statements) {
        this.calls = calls;
        this.statements = statements;
    }

    /** @return the grants lost */
    Set<JdbcGrant> renewAll(Collection<JdbcGrant> grants) {
        if (grants.isEmpty()) {
            return Set.of();
        }
        LeaseStatements sql = statements.get();
        Map<Long, List<JdbcGrant>> byTtl = new LinkedHashMap<>();
        for (JdbcGrant g : grants) {
            byTtl.computeIfAbsent(g.ttlMillis(), ttl -> new ArrayList<>()).add(g);
        }
        long shortestTtl = byTtl.keySet().stream().mapToLong(Long::longValue).min().orElseThrow();
        return calls.run("renewal of " + grants.size() + " leases", shortestTtl, call -> {
            Set<JdbcGrant> lost = new HashSet<>();
            for (Map.Entry<Long, List<JdbcGrant>> group : byTtl.entrySet()) {
                List<JdbcGrant> all = group.getValue();
                for (int from = 0; from < all.size(); from += CHUNK) {
                    List<JdbcGrant> chunk = all.subList(from, Math.min(all.size(), from + CHUNK));
                    lost.addAll(renewChunk(call, sql, group.getKey(), chunk));
                }
            }
            return lost;
        });
    }

    private static List<JdbcGrant> renewChunk(Call call, LeaseStatements sql, long ttlMillis, List<JdbcGrant> chunk)
            throws SQLException {
        Object[] grantArgs = grantArgs(chunk);
        Object[] updateArgs = new Object[grantArgs.length + 1];
        updateArgs[0] = ttlMillis;
        System.arraycopy(grantArgs, 0, updateArgs, 1, grantArgs.length);
        int renewed = call.update(sql.renewAll(chunk.size()), updateArgs);
        if (renewed >= chunk.size()) {
            return List.of();
        }
        Set<HeldRow> held = new HashSet<>(call.query(sql.heldOf(chunk.size()),
                (row, n) -> new HeldRow(row.getString(1), row.getString(2), row.getLong(3)), grantArgs));
        List<JdbcGrant> lost = new ArrayList<>();
        for (JdbcGrant g : chunk) {
            if (!held.contains(new HeldRow(g.name(), g.owner(), g.value()))) {
                lost.add(g);
            }
        }
        return lost;
    }

    /** The names first (one {@code IN} list the primary key index answers), then each grant's triple. */
    private static Object[] grantArgs(List<JdbcGrant> chunk) {
        Object[] args = new Object[chunk.size() * 4];
        for (int i = 0; i < chunk.size(); i++) {
            JdbcGrant g = chunk.get(i);
            args[i] = g.name();
            args[chunk.size() + 3 * i] = g.name();
            args[chunk.size() + 3 * i + 1] = g.owner();
            args[chunk.size() + 3 * i + 2] = g.value();
        }
        return args;
    }

    /** A row as a batch renewal reads it back. */
    private record HeldRow(String name, String owner, long token) {
    }
}
