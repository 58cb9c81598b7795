package dev.lease.fence;

import java.util.function.Consumer;

import javax.sql.DataSource;

import org.springframework.jdbc.core.JdbcOperations;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.support.JdbcAccessor;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A short transaction of its own on the fence's DataSource, committed before it returns, for fence at grant: it
 * must be durable before the leased work starts, whatever transaction the caller may already be in (it is suspended).
 */
final class OwnTransaction {

    private final TransactionTemplate template;

    OwnTransaction(JdbcOperations jdbc) {
        DataSource dataSource = jdbc instanceof JdbcAccessor accessor ? accessor.getDataSource() : null;
        if (dataSource == null) {
            this.template = null;
            return;
        }
        this.template = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
        this.template.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
    }

    void run(String what, Consumer<TransactionStatus> work) {
        if (template == null) {
            throw new IllegalStateException(what + " needs to open a transaction of its own on the fence's DataSource, "
                    + "but the fence was built over a JdbcOperations that does not expose one: build it over a "
                    + "JdbcTemplate.");
        }
        template.executeWithoutResult(work);
    }
}
