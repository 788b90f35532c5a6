// The knowledge line of `npm run bench`: `GET /backend/knowledge/search` over BENCH_KNOWLEDGE_ITEMS
// (100,000) items, driven by autocannon through a rotating set of queries (single words, accent-free
// forms, phrases, prefixes, OR and exclusions; with and without `assistant_id`; limits 5, 10 and 20)
// beside the raw-SQL handler of bench/raw-server.ts running the same ranked query with the same
// visibility rules. Both answers are checked to be the same JSON for every query first, and each
// query's matches, latency and statements are listed.
//
// The items are seeded with INSERT … SELECT generate_series into the real schema, so the generated
// search_vector and its GIN index are the real ones: Portuguese (two thirds) and English text of varying
// length (2 to 21 sentences; every 97th item 300), mostly about its topic (40 topics: a topic's words
// match about 1 item in 40) with common sentences mixed in; half with a description, one in seven with
// a file's text (a price table); one in five exclusive to one of 10 assistants, one in ten of the global
// items hidden from an assistant. Alone: `BENCH_ONLY=knowledge npm run bench`.
import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';
import { autocannonPaths, pad, type LoadResult } from './autocannon.js';
import type { BenchLine } from './line.js';

const ITEMS = Number(process.env.BENCH_KNOWLEDGE_ITEMS ?? 100_000);
const ASSISTANTS = 10;

/** [language, name, sentences]: the sentences an item of the topic is mostly made of. */
const TOPICS: [string, string, string[]][] = [
  [
    'pt',
    'Política de devolução',
    [
      'A devolução pode ser solicitada em até sete dias após o recebimento.',
      'O produto devolvido deve estar na embalagem original, sem sinais de uso.',
      'Após a análise, o reembolso é feito na mesma forma de pagamento.',
      'Devoluções de itens personalizados não são aceitas.',
      'O cliente recebe um código de postagem para enviar o produto sem custo.',
      'Em caso de defeito, a devolução vale por noventa dias.',
    ],
  ],
  [
    'pt',
    'Prazo de entrega',
    [
      'O prazo de entrega para capitais é de dois a cinco dias úteis.',
      'Para o interior, o prazo de entrega pode chegar a dez dias úteis.',
      'O prazo começa a contar após a confirmação do pagamento.',
      'Pedidos feitos até as 14h são despachados no mesmo dia.',
      'A transportadora informa o código de rastreamento por e-mail.',
      'Atrasos na entrega podem ocorrer em feriados prolongados.',
    ],
  ],
  [
    'pt',
    'Formas de pagamento',
    [
      'Aceitamos cartão de crédito, boleto bancário e pix.',
      'O pagamento por pix tem cinco por cento de desconto.',
      'O boleto vence em três dias úteis e não pode ser prorrogado.',
      'No cartão de crédito, o parcelamento é de até dez vezes sem juros.',
      'Pagamentos recusados podem ser refeitos pelo aplicativo.',
      'A confirmação do pix é imediata, a do boleto leva até dois dias.',
    ],
  ],
  [
    'pt',
    'Garantia estendida',
    [
      'A garantia estendida acrescenta doze meses à garantia do fabricante.',
      'O certificado de garantia é enviado por e-mail após a compra.',
      'A garantia não cobre quedas, oxidação ou mau uso.',
      'Para acionar a garantia, apresente a nota fiscal e o certificado.',
      'O reparo em garantia é feito em assistência técnica autorizada.',
      'A garantia estendida pode ser cancelada em até sete dias.',
    ],
  ],
  [
    'pt',
    'Horário de atendimento',
    [
      'O atendimento funciona de segunda a sexta, das 8h às 20h.',
      'Aos sábados, o horário de atendimento é das 9h às 14h.',
      'Em feriados nacionais não há atendimento telefônico.',
      'O chat do site responde vinte e quatro horas por dia.',
      'Fora do horário comercial, deixe uma mensagem pelo WhatsApp.',
      'O tempo médio de espera no telefone é de três minutos.',
    ],
  ],
  [
    'pt',
    'Orçamento para empresas',
    [
      'O orçamento para empresas é enviado em até dois dias úteis.',
      'Pedidos acima de cem unidades têm desconto progressivo no orçamento.',
      'O orçamento tem validade de quinze dias.',
      'Para solicitar um orçamento, informe o CNPJ e a quantidade desejada.',
      'Orçamentos aprovados geram um pedido com faturamento em trinta dias.',
      'O gerente de contas acompanha cada orçamento corporativo.',
    ],
  ],
  [
    'pt',
    'Cancelamento de assinatura',
    [
      'A assinatura pode ser cancelada a qualquer momento pelo aplicativo.',
      'O cancelamento vale a partir do próximo ciclo de cobrança.',
      'Não há multa por cancelamento da assinatura mensal.',
      'No plano anual, o cancelamento devolve os meses não utilizados.',
      'Após o cancelamento, os dados ficam disponíveis por trinta dias.',
      'Para reativar a assinatura, basta escolher um plano novamente.',
    ],
  ],
  [
    'pt',
    'Troca de produtos',
    [
      'A troca por outro tamanho ou cor é gratuita na primeira vez.',
      'Trocas podem ser feitas em qualquer loja física da rede.',
      'O novo produto é enviado assim que o original chega ao depósito.',
      'Produtos em promoção também podem ser trocados.',
      'A troca por defeito tem prioridade no atendimento.',
      'Guarde a etiqueta até confirmar que não vai precisar da troca.',
    ],
  ],
  [
    'pt',
    'Frete grátis',
    [
      'O frete é grátis para compras acima de duzentos reais.',
      'O frete grátis vale para as regiões Sul e Sudeste.',
      'Assinantes do clube têm frete grátis em todos os pedidos.',
      'O cálculo do frete aparece no carrinho antes do pagamento.',
      'Produtos pesados podem ter frete diferenciado.',
      'A retirada na loja não tem custo de frete.',
    ],
  ],
  [
    'pt',
    'Nota fiscal',
    [
      'A nota fiscal eletrônica é enviada por e-mail no despacho.',
      'Para empresas, informe a inscrição estadual antes da emissão.',
      'A segunda via da nota fiscal fica disponível na área do cliente.',
      'Notas fiscais não podem ser alteradas após a emissão.',
      'Em caso de erro, emitimos uma nota de devolução e uma nova nota.',
      'O XML da nota fiscal pode ser baixado pelo portal.',
    ],
  ],
  [
    'pt',
    'Suporte técnico',
    [
      'O suporte técnico atende pelo telefone e pelo chat.',
      'Antes de abrir um chamado, reinicie o aparelho e verifique os cabos.',
      'O número do chamado é enviado por SMS.',
      'Visitas técnicas são agendadas em até três dias úteis.',
      'O suporte remoto exige a instalação de um aplicativo de acesso.',
      'Chamados críticos são atendidos em até quatro horas.',
    ],
  ],
  [
    'pt',
    'Instalação do aparelho',
    [
      'A instalação do aparelho é gratuita nas capitais.',
      'O técnico leva cerca de uma hora para concluir a instalação.',
      'É preciso uma tomada aterrada a até um metro do aparelho.',
      'A instalação inclui o teste de funcionamento e a orientação de uso.',
      'Agende a instalação em até trinta dias após a entrega.',
      'Suportes de parede são vendidos separadamente.',
    ],
  ],
  [
    'pt',
    'Manutenção preventiva',
    [
      'A manutenção preventiva é recomendada a cada seis meses.',
      'A limpeza dos filtros faz parte da manutenção preventiva.',
      'Clientes do plano premium têm duas manutenções por ano incluídas.',
      'A manutenção preventiva prolonga a vida útil do equipamento.',
      'O relatório da manutenção é enviado após a visita.',
      'Peças trocadas na manutenção têm garantia de três meses.',
    ],
  ],
  [
    'pt',
    'Segurança da conta',
    [
      'Ative a verificação em duas etapas para proteger sua conta.',
      'Nunca pedimos sua senha por telefone ou mensagem.',
      'Se suspeitar de acesso indevido, troque a senha imediatamente.',
      'A conta é bloqueada após cinco tentativas de login sem sucesso.',
      'O desbloqueio da conta é feito pelo e-mail cadastrado.',
      'Dispositivos desconhecidos recebem um código de confirmação.',
    ],
  ],
  [
    'pt',
    'Planos e preços',
    [
      'O plano básico custa quarenta e nove reais por mês.',
      'O plano profissional inclui usuários ilimitados e relatórios.',
      'Os preços são reajustados uma vez por ano pelo IPCA.',
      'A mudança de plano é proporcional aos dias restantes do ciclo.',
      'Organizações sem fins lucrativos têm desconto de trinta por cento.',
      'O teste gratuito dura quatorze dias, sem cartão de crédito.',
    ],
  ],
  [
    'pt',
    'Atendimento no WhatsApp',
    [
      'O WhatsApp oficial da empresa tem o selo de conta verificada.',
      'Pelo WhatsApp é possível consultar pedidos e segunda via de boleto.',
      'O assistente virtual responde as dúvidas mais comuns no WhatsApp.',
      'Para falar com um atendente, digite a palavra atendente.',
      'Não enviamos links de pagamento por WhatsApp sem solicitação.',
      'As conversas no WhatsApp ficam registradas no histórico do cliente.',
    ],
  ],
  [
    'pt',
    'Programa de fidelidade',
    [
      'Cada real gasto vale um ponto no programa de fidelidade.',
      'Os pontos de fidelidade expiram após doze meses.',
      'Pontos podem ser trocados por descontos e frete grátis.',
      'Clientes ouro têm atendimento prioritário e brindes.',
      'A adesão ao programa de fidelidade é gratuita.',
      'O saldo de pontos aparece na área do cliente.',
    ],
  ],
  [
    'pt',
    'Cadastro de clientes',
    [
      'O cadastro exige nome completo, CPF e um e-mail válido.',
      'Dados do cadastro podem ser alterados na área do cliente.',
      'Menores de dezoito anos precisam do consentimento dos responsáveis.',
      'O cadastro pode ser excluído a pedido, conforme a LGPD.',
      'Confirmamos o cadastro por um link enviado ao e-mail.',
      'Empresas fazem o cadastro com CNPJ e razão social.',
    ],
  ],
  [
    'pt',
    'Promoções da semana',
    [
      'As promoções da semana valem de segunda a domingo.',
      'Cupons de desconto não são cumulativos com as promoções.',
      'Produtos em promoção têm estoque limitado.',
      'A newsletter traz as promoções com um dia de antecedência.',
      'O preço promocional vale apenas para compras no site.',
      'Na Black Friday as promoções começam à meia-noite.',
    ],
  ],
  [
    'pt',
    'Reembolso',
    [
      'O reembolso no cartão aparece em até duas faturas.',
      'Reembolsos por pix são feitos em até vinte e quatro horas.',
      'No boleto, o reembolso é feito por depósito em conta do titular.',
      'O valor do frete é reembolsado quando o erro foi da loja.',
      'Acompanhe o status do reembolso na área do cliente.',
      'Reembolsos parciais acontecem quando só parte do pedido é devolvida.',
    ],
  ],
  [
    'pt',
    'Cartão de crédito',
    [
      'Aceitamos as bandeiras Visa, Mastercard, Elo e American Express.',
      'O cartão de crédito é validado antes da confirmação do pedido.',
      'Compras no cartão de crédito podem passar por análise antifraude.',
      'O estorno no cartão segue o prazo da operadora.',
      'Cartões virtuais são aceitos normalmente.',
      'Dados do cartão não ficam armazenados em nossos servidores.',
    ],
  ],
  [
    'pt',
    'Estoque e disponibilidade',
    [
      'A disponibilidade em estoque é atualizada a cada quinze minutos.',
      'Produtos sem estoque podem ser reservados com aviso por e-mail.',
      'O estoque das lojas físicas pode ser consultado no site.',
      'Itens sob encomenda levam até vinte dias para chegar.',
      'Reservas de estoque expiram em quarenta e oito horas.',
      'A pré-venda garante o produto antes da chegada ao estoque.',
    ],
  ],
  [
    'pt',
    'Agendamento de visitas',
    [
      'O agendamento de visitas é feito pelo site ou pelo telefone.',
      'Remarcações são gratuitas com vinte e quatro horas de antecedência.',
      'O técnico confirma o agendamento na véspera da visita.',
      'Visitas aos sábados têm disponibilidade limitada.',
      'Ausência sem aviso gera uma taxa de deslocamento.',
      'O comprovante do agendamento chega por e-mail e SMS.',
    ],
  ],
  [
    'pt',
    'Contrato de serviço',
    [
      'O contrato de serviço tem vigência de doze meses.',
      'A renovação do contrato é automática, salvo aviso prévio.',
      'Multas contratuais são proporcionais ao tempo restante.',
      'Alterações no contrato exigem um aditivo assinado.',
      'O contrato pode ser assinado digitalmente.',
      'Cópias do contrato ficam disponíveis no portal do cliente.',
    ],
  ],
  [
    'pt',
    'Privacidade e dados',
    [
      'Tratamos os dados pessoais conforme a LGPD.',
      'O titular pode pedir acesso, correção ou exclusão dos dados.',
      'Não vendemos dados de clientes a terceiros.',
      'Cookies de análise podem ser recusados no banner do site.',
      'O encarregado de dados responde em até quinze dias.',
      'Registros de acesso são guardados por seis meses.',
    ],
  ],
  [
    'pt',
    'Acessibilidade',
    [
      'O site segue as diretrizes de acessibilidade WCAG.',
      'Há atendimento em Libras por videochamada.',
      'As lojas físicas têm rampas e banheiros adaptados.',
      'O aplicativo é compatível com leitores de tela.',
      'Pessoas com deficiência têm prioridade no atendimento.',
      'Cardápios e manuais em braile podem ser solicitados.',
    ],
  ],
  [
    'en',
    'Refund policy',
    [
      'Refunds are issued to the original payment method within five business days.',
      'Items must be returned unused and in their original packaging.',
      'Shipping costs are refunded only when the error was ours.',
      'Digital products are not eligible for a refund once downloaded.',
      'You will receive an email when your refund has been processed.',
      'Partial refunds apply when only part of an order is returned.',
    ],
  ],
  [
    'en',
    'Shipping times',
    [
      'Standard shipping takes three to seven business days.',
      'Express shipping delivers the next business day in major cities.',
      'Orders placed before 2 pm ship the same day.',
      'International shipping may take up to three weeks.',
      'Tracking numbers are emailed as soon as the parcel ships.',
      'Shipping delays can happen during public holidays.',
    ],
  ],
  [
    'en',
    'Payment methods',
    [
      'We accept credit cards, debit cards and bank transfers.',
      'Payments are processed securely by our payment provider.',
      'Invoices can be paid within thirty days by approved businesses.',
      'A declined payment can be retried from the order page.',
      'We do not store your card details on our servers.',
      'Gift cards can be combined with any other payment method.',
    ],
  ],
  [
    'en',
    'Extended warranty',
    [
      'The extended warranty adds two years to the manufacturer warranty.',
      'Warranty claims require the receipt and the serial number.',
      'Accidental damage is not covered by the standard warranty.',
      'Repairs under warranty are free of charge, including shipping.',
      'The warranty can be transferred to a new owner.',
      'Extended warranty plans can be cancelled within thirty days.',
    ],
  ],
  [
    'en',
    'Opening hours',
    [
      'Our support team is available Monday to Friday, 8 am to 8 pm.',
      'On Saturdays we open from 9 am to 2 pm.',
      'The live chat answers around the clock.',
      'We are closed on national holidays.',
      'Store opening hours may vary by location.',
      'Average phone waiting time is under three minutes.',
    ],
  ],
  [
    'en',
    'Subscription cancellation',
    [
      'You can cancel your subscription at any time from your account.',
      'Cancellation takes effect at the end of the current billing period.',
      'Annual plans are refunded for the unused months.',
      'Your data is kept for thirty days after cancellation.',
      'There is no cancellation fee on monthly plans.',
      'You can reactivate a cancelled subscription with one click.',
    ],
  ],
  [
    'en',
    'Product exchanges',
    [
      'Exchanges for a different size or colour are free.',
      'Exchanges can be made in any of our stores.',
      'The replacement ships as soon as we receive the original item.',
      'Sale items can also be exchanged.',
      'Defective products are exchanged with priority.',
      'Keep the tags until you are sure you will not need an exchange.',
    ],
  ],
  [
    'en',
    'Account security',
    [
      'Enable two-factor authentication to protect your account.',
      'We will never ask for your password by phone or email.',
      'Change your password immediately if you suspect unauthorized access.',
      'Accounts are locked after five failed sign-in attempts.',
      'Unlock your account through the link sent to your email.',
      'New devices receive a confirmation code before signing in.',
    ],
  ],
  [
    'en',
    'Plans and pricing',
    [
      'The starter plan costs nine dollars per user per month.',
      'The business plan includes unlimited projects and priority support.',
      'Prices are reviewed once a year.',
      'Plan changes are prorated to the remaining days of the cycle.',
      'Nonprofits get a thirty percent discount.',
      'The free trial lasts fourteen days, no credit card required.',
    ],
  ],
  [
    'en',
    'Technical support',
    [
      'Technical support is available by phone, chat and email.',
      'Before opening a ticket, restart the device and check the cables.',
      'Ticket numbers are sent by text message.',
      'On-site visits are scheduled within three business days.',
      'Remote support requires a screen-sharing application.',
      'Critical tickets are answered within four hours.',
    ],
  ],
  [
    'en',
    'Invoices and billing',
    [
      'Invoices are emailed on the first day of each month.',
      'Billing details can be changed in the account settings.',
      'Past invoices can be downloaded as PDF files.',
      'Tax identification numbers appear on every invoice.',
      'Failed charges are retried three times over a week.',
      'Credit notes are issued for billing mistakes.',
    ],
  ],
  [
    'en',
    'Loyalty program',
    [
      'Every dollar spent earns one loyalty point.',
      'Loyalty points expire after twelve months.',
      'Points can be redeemed for discounts and free shipping.',
      'Gold members get priority support and gifts.',
      'Joining the loyalty program is free.',
      'Your points balance is shown in your account.',
    ],
  ],
  [
    'en',
    'Installation service',
    [
      'Installation is free in the metropolitan area.',
      'A technician needs about one hour to complete the installation.',
      'A grounded outlet must be available near the appliance.',
      'Installation includes a functional test and usage instructions.',
      'Book the installation within thirty days of delivery.',
      'Wall mounts are sold separately.',
    ],
  ],
  [
    'en',
    'Privacy and data',
    [
      'We process personal data in accordance with the GDPR and the LGPD.',
      'You can request access to, correction or deletion of your data.',
      'We never sell customer data to third parties.',
      'Analytics cookies can be declined in the cookie banner.',
      'Our data protection officer answers within fifteen days.',
      'Access logs are kept for six months.',
    ],
  ],
];

const COMMON_PT = [
  'Em caso de dúvidas, fale com a nossa equipe pelos canais oficiais.',
  'As condições podem mudar sem aviso prévio; consulte sempre a versão mais recente.',
  'Esta política vale para compras feitas no site, no aplicativo e nas lojas físicas.',
  'Guarde o número do pedido para agilizar o atendimento.',
  'Os prazos são contados em dias úteis, sem sábados, domingos e feriados.',
  'Clientes empresariais têm um gerente de contas dedicado.',
  'O aplicativo envia notificações a cada mudança no status do pedido.',
  'A área do cliente reúne pedidos, notas fiscais e conversas.',
];
const COMMON_EN = [
  'If you have questions, contact our team through the official channels.',
  'These terms may change without notice; always check the latest version.',
  'This policy applies to purchases made online, in the app and in stores.',
  'Keep your order number at hand to speed up support.',
  'Business days exclude weekends and public holidays.',
  'Business customers have a dedicated account manager.',
];

/** The rotating queries: [q, with an assistant, limit]. */
const QUERIES: [string, boolean, number][] = [
  ['orcamento', false, 10],
  ['devolucao', true, 10],
  ['garantia', false, 5],
  ['refund', true, 10],
  ['"prazo de entrega"', false, 10],
  ['"loyalty points"', true, 5],
  ['fidel*', false, 10],
  ['instal*', true, 20],
  ['cartao credito', false, 10],
  ['horario atendimento', true, 10],
  ['boleto OR pix', false, 10],
  ['cancelamento -anual', true, 10],
  ['invoices billing', false, 20],
  ['manutencao preventiva', true, 5],
  ['acessibilidade libras', false, 10],
  ['atendimento', true, 10], // a word of the common sentences: matches most Portuguese items
];

interface Seeded {
  tenantId: string;
  key: string;
  assistants: string[];
}

async function seedKnowledge(pool: pg.Pool, org: { tenantId: string; key: string }, log: (s: string) => void): Promise<Seeded> {
  const t = org.tenantId;
  const { rows } = await pool.query(
    `INSERT INTO assistants (tenant_id, name, instructions) SELECT $1, 'Assistente ' || n, 'Responda com cordialidade.' FROM generate_series(1, $2) n RETURNING id`,
    [t, ASSISTANTS],
  );
  const assistants = rows.map((r) => r.id as string).sort();
  const started = Date.now();
  // Chunks, so progress shows and no single statement holds all the text at once.
  const chunk = 10_000;
  for (let from = 1; from <= ITEMS; from += chunk) {
    const to = Math.min(ITEMS, from + chunk - 1);
    await pool.query(
      `INSERT INTO knowledge_items (tenant_id, name, description, typed_text, file_text, assistant_id, file_name, file_type, file_size, created_at, updated_at)
       SELECT $1, p.names[s.topic] || ' ' || i,
              CASE WHEN i % 2 = 0 THEN p.topics[s.topic][1 + (i / 2) % 6] ELSE '' END,
              t.text,
              CASE WHEN i % 7 = 0 THEN f.text ELSE '' END,
              CASE WHEN i % 5 = 0 THEN ($2::uuid[])[1 + (i / 5) % ${ASSISTANTS}] END,
              CASE WHEN i % 7 = 0 THEN 'tabela-' || i || '.xlsx' END,
              CASE WHEN i % 7 = 0 THEN 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' END,
              CASE WHEN i % 7 = 0 THEN 2000 + length(f.text) * 3 END,
              now() - make_interval(secs => i), now() - make_interval(secs => i)
         FROM generate_series($3::int, $4::int) AS i
        CROSS JOIN (SELECT $5::text[] AS names, $6::text[] AS langs, $7::text[][] AS topics, $8::text[] AS common_pt, $9::text[] AS common_en) p
        CROSS JOIN LATERAL (SELECT 1 + (i * 7 + i / 40) % array_length(p.names, 1) AS topic,
                                   CASE WHEN i % 97 = 0 THEN 300 ELSE 2 + (i * 37) % 20 END AS sentences) s
        CROSS JOIN LATERAL (
          SELECT string_agg(CASE WHEN (i * 31 + j * 17) % 10 < 7 THEN p.topics[s.topic][1 + (i * 13 + j * 7) % 6]
                                 WHEN p.langs[s.topic] = 'pt' THEN p.common_pt[1 + (i * 11 + j * 5) % array_length(p.common_pt, 1)]
                                 ELSE p.common_en[1 + (i * 11 + j * 5) % array_length(p.common_en, 1)] END, ' ' ORDER BY j) AS text
            FROM generate_series(1, s.sentences) AS j) t
        CROSS JOIN LATERAL (
          SELECT CASE WHEN p.langs[s.topic] = 'pt' THEN 'Produto' || E'\\t' || 'Preço' || E'\\t' || 'Código' ELSE 'Product' || E'\\t' || 'Price' || E'\\t' || 'Code' END
                 || string_agg(E'\\n' || p.names[s.topic] || ' ' || r || E'\\t' || ((i * r) % 900 + 99) || ',90' || E'\\t' || 'SKU-' || (i * 100 + r), '' ORDER BY r) AS text
            FROM generate_series(1, 3 + i % 12) AS r) f`,
      [t, assistants, from, to, TOPICS.map((x) => x[1]), TOPICS.map((x) => x[0]), TOPICS.map((x) => x[2]), COMMON_PT, COMMON_EN],
    );
    log(`knowledge: ${to.toLocaleString('en')} items (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  }
  // One global item in ten hidden from one assistant, one in thirty from a second one.
  await pool.query(
    `INSERT INTO knowledge_exclusions (tenant_id, item_id, assistant_id)
     SELECT k.tenant_id, k.id, a.id
       FROM (SELECT id, tenant_id, row_number() OVER (ORDER BY created_at DESC, id) AS n FROM knowledge_items WHERE tenant_id = $1 AND assistant_id IS NULL) k
       JOIN LATERAL (SELECT ($2::uuid[])[1 + k.n % ${ASSISTANTS}] AS id WHERE k.n % 10 = 0
                     UNION ALL SELECT ($2::uuid[])[1 + (k.n + 3) % ${ASSISTANTS}] WHERE k.n % 30 = 0) a ON true`,
    [t, assistants],
  );
  // What autovacuum would do before the first searches: the GIN pending list merged, statistics fresh.
  await pool.query('VACUUM ANALYZE knowledge_items');
  await pool.query('VACUUM ANALYZE knowledge_exclusions');
  return { ...org, assistants };
}

const searchPath = (prefix: string, [q, withAssistant, limit]: [string, boolean, number], assistant: string) =>
  `${prefix}/knowledge/search?${new URLSearchParams({ q, ...(withAssistant ? { assistant_id: assistant } : {}), limit: String(limit) })}`;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export const knowledgeLine: BenchLine = {
  name: 'knowledge',
  async run(env) {
    const { totalStatements } = await import('../src/db/statements.js');
    const { startRawServer, knowledgeTsquery } = await import('./raw-server.js');
    const pool = new pg.Pool({ connectionString: env.dbUrl, max: 2, options: `-c search_path="${env.schema}"` });
    const t0 = Date.now();
    const seeded = await seedKnowledge(pool, await env.organisation('Bench knowledge'), env.log).catch(async (e) => {
      await pool.end();
      throw e;
    });
    const {
      rows: [sizes],
    } = await pool.query(
      `SELECT (SELECT count(*) FROM knowledge_items WHERE tenant_id = $1)::int AS items,
              (SELECT count(*) FROM knowledge_items WHERE tenant_id = $1 AND assistant_id IS NOT NULL)::int AS exclusive,
              (SELECT count(*) FROM knowledge_exclusions WHERE tenant_id = $1)::int AS exclusions,
              pg_size_pretty(pg_total_relation_size('knowledge_items')) AS mb`,
      [seeded.tenantId],
    );
    env.log(`knowledge: seeded in ${((Date.now() - t0) / 1000).toFixed(0)} s`);

    const raw = await startRawServer(env.dbUrl, env.schema, 10);
    const auth = { authorization: `Bearer ${seeded.key}` };
    const assistantFor = (i: number) => seeded.assistants[i % seeded.assistants.length];
    const restPaths = QUERIES.map((query, i) => searchPath('/backend', query, assistantFor(i)));
    const rawPaths = QUERIES.map((query, i) => searchPath('', query, assistantFor(i)));

    // Per query, sequentially: the same JSON from both, statements, matches, and the median of 3 latencies.
    const perQuery: {
      q: string;
      matches: number;
      hits: number;
      same: boolean;
      restMs: number;
      rawMs: number;
      restStatements: number;
      rawStatements: number;
    }[] = [];
    const plan: string[] = [];
    try {
      for (const [i, query] of QUERIES.entries()) {
        const time = async (url: string) => {
          const started = performance.now();
          const response = await fetch(url, { headers: auth });
          const body = await response.json();
          if (response.status !== 200) throw new Error(`${url}: ${response.status} ${JSON.stringify(body)}`);
          return { ms: performance.now() - started, body };
        };
        const restBefore = totalStatements.count;
        const rest = await time(env.serverUrl + restPaths[i]);
        const restStatements = totalStatements.count - restBefore;
        const rawBefore = raw.statements.count;
        const rawAnswer = await time(raw.url + rawPaths[i]);
        const rawStatements = raw.statements.count - rawBefore;
        const restMs = [rest.ms];
        const rawMs = [rawAnswer.ms];
        for (let n = 0; n < 2; n++) {
          restMs.push((await time(env.serverUrl + restPaths[i])).ms);
          rawMs.push((await time(raw.url + rawPaths[i])).ms);
        }
        perQuery.push({
          q: query[0] + (query[1] ? ' (assistant)' : ''),
          matches: 0,
          hits: (rest.body as unknown[]).length,
          same: isDeepStrictEqual(rest.body, rawAnswer.body),
          restMs: median(restMs),
          rawMs: median(rawMs),
          restStatements,
          rawStatements,
        });
      }
      // How many items each query matches (before visibility and limit), and the plan of a typical one.
      for (const [i, [q]] of QUERIES.entries()) {
        const { tsq, params } = knowledgeTsquery(q, 2);
        const {
          rows: [r],
        } = await pool.query(`SELECT count(*)::int AS n FROM knowledge_items k WHERE k.tenant_id = $1 AND k.search_vector @@ (${tsq})`, [
          seeded.tenantId,
          ...params,
        ]);
        perQuery[i].matches = r.n;
      }
      const { Prisma } = await import('../src/generated/prisma/client.js');
      const { searchStatement } = await import('../src/domains/knowledge/search.js');
      const typical = searchStatement(Prisma.sql`${seeded.tenantId}::uuid`, {
        q: 'orcamento',
        assistantId: seeded.assistants[0],
        limit: 10,
      });
      const explain = await env.db.prisma.$queryRawUnsafe<{ 'QUERY PLAN': string }[]>(
        `EXPLAIN (ANALYZE, COSTS OFF) ${typical.text}`,
        ...typical.values,
      );
      plan.push(
        ...explain
          .map((r) => r['QUERY PLAN'])
          .filter((l) => /Scan|Execution Time/.test(l))
          .map((l) => l.trim()),
      );
      const same = perQuery.filter((r) => r.same).length;
      env.log(`knowledge: same JSON for ${same} of ${perQuery.length} queries`);
      if (same !== perQuery.length)
        env.log(
          `knowledge: DIFFERENT JSON for ${perQuery
            .filter((r) => !r.same)
            .map((r) => r.q)
            .join(', ')}`,
        );

      // Warm-up, then `rounds` interleaved runs of each; the best kept.
      const variants = [
        { variant: '(a) REST', base: env.serverUrl, paths: restPaths },
        { variant: '(c) raw SQL', base: raw.url, paths: rawPaths },
      ];
      for (const v of variants) await autocannonPaths(v.base, v.paths, { headers: auth, connections: env.connections, duration: 2 });
      const best = new Map<string, LoadResult>();
      for (let round = 0; round < env.rounds; round++) {
        for (const v of variants) {
          const r = await autocannonPaths(v.base, v.paths, { headers: auth, connections: env.connections, duration: env.duration });
          const prev = best.get(v.variant);
          if (!prev || r.rps > prev.rps) best.set(v.variant, r);
        }
      }
      const [a, c] = variants.map((v) => best.get(v.variant)!);
      const avg = (xs: number[]) => (xs.reduce((s, x) => s + x, 0) / xs.length).toFixed(1);
      const report = [
        `Knowledge search — ${env.connections} connections, ${env.duration} s per run, best of ${env.rounds} interleaved runs, ${QUERIES.length} queries in rotation`,
        `data: ${sizes.items.toLocaleString('en')} items (${sizes.exclusive.toLocaleString('en')} exclusive to one of ${ASSISTANTS} assistants), ${sizes.exclusions.toLocaleString('en')} exclusions; knowledge_items ${sizes.mb} with its indexes`,
        `plan of "orcamento" with an assistant: ${plan.join('; ')}`,
        '',
        `| ${pad('variant', 12)} | ${pad('req/s', 8)} | ${pad('p50 ms', 7)} | ${pad('p99 ms', 7)} | ${pad('SQL/req', 7)} | errors |`,
        `| ${'-'.repeat(12)} | ${'-'.repeat(8)} | ${'-'.repeat(7)} | ${'-'.repeat(7)} | ${'-'.repeat(7)} | ------ |`,
        `| ${pad('(a) REST', 12)} | ${pad(a.rps.toFixed(1), 8)} | ${pad(a.p50, 7)} | ${pad(a.p99, 7)} | ${pad(avg(perQuery.map((r) => r.restStatements)), 7)} | ${a.errors} |`,
        `| ${pad('(c) raw SQL', 12)} | ${pad(c.rps.toFixed(1), 8)} | ${pad(c.p50, 7)} | ${pad(c.p99, 7)} | ${pad(avg(perQuery.map((r) => r.rawStatements)), 7)} | ${c.errors} |`,
        '',
        `(a)/(c) throughput ${(a.rps / c.rps).toFixed(2)}×; p50 (a)/(c) ${(a.p50 / Math.max(c.p50, 1)).toFixed(2)}×; same JSON for ${same} of ${perQuery.length} queries`,
        '',
        'Per query, one request at a time (median of 3):',
        '',
        `| ${pad('q', 34)} | ${pad('matches', 8)} | hits | ${pad('REST ms', 7)} | ${pad('raw ms', 7)} | SQL (a)/(c) | same |`,
        `| ${'-'.repeat(34)} | ${'-'.repeat(8)} | ---- | ${'-'.repeat(7)} | ${'-'.repeat(7)} | ----------- | ---- |`,
        ...perQuery.map(
          (r) =>
            `| ${pad(r.q, 34)} | ${pad(r.matches.toLocaleString('en'), 8)} | ${pad(r.hits, 4)} | ${pad(r.restMs.toFixed(1), 7)} | ${pad(r.rawMs.toFixed(1), 7)} | ${pad(`${r.restStatements} / ${r.rawStatements}`, 11)} | ${r.same ? 'yes ' : 'NO  '} |`,
        ),
      ];
      return {
        report,
        summary: [
          `knowledge search (${sizes.items.toLocaleString('en')} items): REST ${a.rps.toFixed(1)} req/s p50 ${a.p50} ms; raw ${c.rps.toFixed(1)} req/s p50 ${c.p50} ms; (a)/(c) ${(a.rps / c.rps).toFixed(2)}×`,
        ],
      };
    } finally {
      await raw.close();
      await pool.end();
    }
  },
};
