package dev.lease.fence.jpa.once;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import jakarta.persistence.Entity;
import jakarta.persistence.EntityManager;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.PersistenceContext;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

import dev.lease.Once;

/** An application whose {@code @Once} method writes through JPA, its transactions those of JpaTransactionManager. */
@SpringBootApplication
public class OnceApp {

    static ConfigurableApplicationContext start(String jdbcUrl) {
        return new SpringApplicationBuilder(OnceApp.class).web(WebApplicationType.NONE)
                .properties(Map.of("spring.datasource.url", jdbcUrl, "spring.jpa.hibernate.ddl-auto", "update",
                        "spring.jpa.open-in-view", "false", "lease.backend", "in-memory",
                        "spring.main.banner-mode", "off", "lease.once.initialize-schema", "always"))
                .run();
    }

    /** What the job writes. */
    @Entity
    public static class Report {

        @Id
        @GeneratedValue(strategy = GenerationType.IDENTITY)
        private Long id;

        private String period;

        protected Report() {
        }

        Report(String period) {
            this.period = period;
        }
    }

    /** The job: one report per period, written through the EntityManager and flushed before it waits. */
    @Component
    public static class Reports {

        @PersistenceContext
        private EntityManager entities;

        @Once(key = "report-#{#period}")
        public Optional<String> write(String period, CountDownLatch written, CountDownLatch release) {
            return persist(period, written, release);
        }

        /** The same job without @Once: its own transaction, and nothing to stop a second run. */
        @Transactional
        public Optional<String> writeWithoutOnce(String period, CountDownLatch written, CountDownLatch release) {
            return persist(period, written, release);
        }

        private Optional<String> persist(String period, CountDownLatch written, CountDownLatch release) {
            entities.persist(new Report(period));
            entities.flush();
            written.countDown();
            try {
                if (!release.await(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("never released");
                }
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            if (period.startsWith("failing")) {
                throw new IllegalStateException("the report failed after its write");
            }
            return Optional.of(period);
        }
    }
}
