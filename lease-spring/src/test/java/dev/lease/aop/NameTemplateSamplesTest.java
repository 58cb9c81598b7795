package dev.lease.aop;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Predicate;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import dev.lease.spi.LeaseNames;

/**
 * A template is refused at startup only when its literal parts alone break a rule ({@link NameTemplate#samples}): for
 * random templates and rules of the shapes the backends have (a DNS subdomain after a prefix, as Kubernetes; a
 * column length, as JDBC; the rules of every name), whenever every sample breaks the rule, so does every name the
 * template gives for many other values of its parts, and a template the check accepts has a sample the rule accepts.
 */
class NameTemplateSamplesTest {

    private static final Pattern SUBDOMAIN = Pattern
            .compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

    /** Stand-ins for the backends' rules (the real ones are tested against their backends at startup). */
    private static final Map<String, Predicate<String>> RULES = Map.of(
            "subdomain after 'lease-', at most 24", name -> valid(name)
                    && ("lease-" + name).length() <= 24 && SUBDOMAIN.matcher("lease-" + name).matches(),
            "at most 12 characters", name -> valid(name) && name.length() <= 12,
            "every name's rules", NameTemplateSamplesTest::valid);

    private static final String[] FRAGMENTS = {"", "a", "z9", "Z", "0", "-", ".", "_", "..", "-.", "report-",
            "invoice", " ", "x/y"};

    private static final String[] VALUES = {"", "0", "a", "b1", "Q", "-", ".", "a-b", "a.b", "_", " ", "0.", "-0",
            "longer-value-42", "x"};

    @Test
    void aTemplateIsRefusedOnlyWhenNoValueOfItsPartsCouldMakeAnAcceptedName() {
        long seed = System.nanoTime();
        System.out.println("NameTemplateSamplesTest seed: " + seed);
        Random random = new Random(seed);
        int refused = 0;
        for (int i = 0; i < 800; i++) {
            int parts = 1 + random.nextInt(2);
            List<String> literals = new ArrayList<>();
            for (int p = 0; p <= parts; p++) {
                literals.add(FRAGMENTS[random.nextInt(FRAGMENTS.length)]);
            }
            StringBuilder text = new StringBuilder(literals.get(0));
            for (int p = 1; p <= parts; p++) {
                text.append("#{#p").append(p - 1).append('}').append(literals.get(p));
            }
            NameTemplate template = NameTemplate.parse("test", "name", text.toString(), LeaseNames::validate, "a",
                    "a-#{#id}");
            for (Map.Entry<String, Predicate<String>> rule : RULES.entrySet()) {
                boolean startupRefuses = template.samples().stream().noneMatch(rule.getValue());
                if (!startupRefuses) {
                    continue;
                }
                refused++;
                for (String first : VALUES) {
                    for (String second : VALUES) {
                        String name = literals.get(0) + first + literals.get(1)
                                + (parts == 2 ? second + literals.get(2) : "");
                        assertThat(rule.getValue().test(name)).as("seed %d: '%s' is refused at startup under rule "
                                + "'%s', but with parts '%s', '%s' it gives '%s', which the rule accepts", seed, text,
                                rule.getKey(), first, second, name).isFalse();
                    }
                }
            }
        }
        assertThat(refused).as("seed %d: the random templates include refused ones", seed).isPositive();
    }

    @Test
    void aLiteralIsItsOnlySample() {
        assertThat(NameTemplate.parse("test", "name", "Nightly_Report", LeaseNames::validate, "a", "a-#{#id}")
                .samples()).containsExactly("Nightly_Report");
        assertThat(NameTemplate.parse("test", "name", "Invoice_#{#id}-#{#part}", LeaseNames::validate, "a",
                "a-#{#id}").samples()).containsExactly("Invoice_0-0", "Invoice_a-a", "Invoice_-");
    }

    private static boolean valid(String name) {
        try {
            LeaseNames.validate(name);
            return true;
        }
        catch (IllegalArgumentException ex) {
            return false;
        }
    }
}
