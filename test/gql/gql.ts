/* eslint-disable */
import * as types from './graphql.js';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  fragment DealsPageInfo on PageInfo {\n    hasNextPage\n    hasPreviousPage\n    endCursor\n    startCursor\n  }\n": typeof types.DealsPageInfoFragmentDoc,
    "\n  query DealsBoard($id: UUID!, $first: Int, $search: String) {\n    pipelineBoard(id: $id, search: $search) {\n      total_deals\n      total_amount\n      stages {\n        deal_count\n        total\n        stage {\n          id\n        }\n      }\n      pipeline {\n        id\n        stages {\n          id\n          name\n          deals(first: $first, search: $search) {\n            edges {\n              cursor\n              node {\n                id\n                number\n                total\n                lead_name\n                pending_todos\n                lead {\n                  id\n                  name\n                }\n                products {\n                  name\n                  total\n                }\n                tags {\n                  name\n                }\n              }\n            }\n            pageInfo {\n              ...DealsPageInfo\n            }\n          }\n        }\n      }\n    }\n  }\n": typeof types.DealsBoardDocument,
    "\n  query DealsColumn($id: UUID!, $first: Int, $after: String, $last: Int, $before: String, $sort: DealSort) {\n    pipelineBoard(id: $id) {\n      pipeline {\n        stages {\n          id\n          deals(first: $first, after: $after, last: $last, before: $before, sort: $sort) {\n            edges {\n              node {\n                number\n              }\n            }\n            pageInfo {\n              ...DealsPageInfo\n            }\n          }\n        }\n      }\n    }\n  }\n": typeof types.DealsColumnDocument,
    "\n  query DealsList($id: UUID!, $limit: Int, $page: Int, $sort: DealSort) {\n    pipelineDeals(id: $id, limit: $limit, page: $page, sort: $sort) {\n      data {\n        id\n        number\n        lead_name\n        products {\n          name\n        }\n        tags {\n          name\n        }\n        pending_todos\n        overdue_todos\n      }\n      pagination {\n        current_page\n        total_pages\n        total_count\n        has_next\n        has_prev\n      }\n    }\n  }\n": typeof types.DealsListDocument,
    "\n  mutation DealsCreate($pipeline_id: UUID!, $stage_id: UUID!, $lead_id: UUID, $loss_reason: String, $products: [DealProductInput!]) {\n    createDeal(pipeline_id: $pipeline_id, stage_id: $stage_id, lead_id: $lead_id, loss_reason: $loss_reason, products: $products) {\n      id\n      number\n      total\n      loss_reason\n      lost_at\n      stage {\n        name\n        kind\n      }\n      owner {\n        id\n      }\n    }\n  }\n": typeof types.DealsCreateDocument,
    "\n  mutation DealsMove($id: UUID!, $stage_id: UUID!, $loss_reason: String) {\n    moveDeal(id: $id, stage_id: $stage_id, loss_reason: $loss_reason) {\n      stage_id\n      won_at\n      lost_at\n      loss_reason\n    }\n  }\n": typeof types.DealsMoveDocument,
    "\n  query DealsHistory($id: UUID!) {\n    dealHistory(id: $id) {\n      type\n      actor_name\n    }\n    dealActivities(id: $id) {\n      title\n    }\n    deal(id: $id) {\n      number\n      lead {\n        name\n        deals(first: 5) {\n          edges {\n            node {\n              number\n            }\n          }\n        }\n      }\n    }\n  }\n": typeof types.DealsHistoryDocument,
    "\n  mutation DealsEdit($id: UUID!, $tag_id: UUID!, $value: Float, $owner_id: UUID) {\n    updateDeal(id: $id, value: $value, owner_id: $owner_id) {\n      value\n      total\n      owner {\n        name\n      }\n    }\n    addDealTag(id: $id, tag_id: $tag_id) {\n      success\n    }\n  }\n": typeof types.DealsEditDocument,
    "\n  mutation DealsUntagDelete($id: UUID!, $tag_id: UUID!) {\n    removeDealTag(id: $id, tag_id: $tag_id) {\n      success\n    }\n    deleteDeal(id: $id) {\n      success\n    }\n  }\n": typeof types.DealsUntagDeleteDocument,
    "\n  query BoardConfig {\n    pipelineGroups {\n      id\n      name\n      position\n      pipelines {\n        id\n        name\n        position\n        loss_reasons\n        group {\n          id\n        }\n        stages {\n          id\n          name\n          kind\n          position\n          color\n          pipeline {\n            id\n          }\n        }\n      }\n    }\n  }\n": typeof types.BoardConfigDocument,
    "\n  mutation CreatePipelineGql($name: String!, $new_group_name: String) {\n    createPipeline(name: $name, new_group_name: $new_group_name) {\n      id\n      group {\n        name\n      }\n      stages {\n        name\n        kind\n      }\n    }\n  }\n": typeof types.CreatePipelineGqlDocument,
    "\n  query ListingGql {\n    pipelines {\n      groups {\n        id\n        name\n      }\n      pipelines {\n        id\n        group_id\n        stages {\n          name\n        }\n      }\n    }\n  }\n": typeof types.ListingGqlDocument,
    "\n  query ProductsGql {\n    products {\n      id\n      name\n      price\n    }\n  }\n": typeof types.ProductsGqlDocument,
    "\n  mutation SavePipelineGql($id: UUID!, $name: String!, $stages: [ConfigStage!]!, $reallocation_targets: JSONObject) {\n    updatePipeline(id: $id, name: $name, stages: $stages, reallocation_targets: $reallocation_targets) {\n      id\n      name\n      stages {\n        id\n        name\n        position\n        kind\n      }\n    }\n  }\n": typeof types.SavePipelineGqlDocument,
    "\n  mutation DeleteStageGql($id: UUID!, $target_stage_id: UUID) {\n    deleteStage(id: $id, target_stage_id: $target_stage_id) {\n      success\n    }\n  }\n": typeof types.DeleteStageGqlDocument,
    "\n  mutation CreateLead($name: String!, $phone: String!, $tag_ids: [UUID!], $custom_fields: JSONObject) {\n    createLead(name: $name, phone: $phone, tag_ids: $tag_ids, custom_fields: $custom_fields) {\n      id name phone email company custom_fields created_at\n      status { id name color }\n      tags { id name color }\n    }\n  }\n": typeof types.CreateLeadDocument,
    "\n  query LeadById($id: UUID!) {\n    lead(id: $id) { id name phone email company custom_fields created_at status { id name color } tags { id name color } }\n  }\n": typeof types.LeadByIdDocument,
    "\n  mutation UploadFile($file: File!, $type: UploadFileType, $folder: String) {\n    uploadFile(file: $file, type: $type, folder: $folder) {\n      id\n      tenant_id\n      filename\n      file_type\n      file_url\n      mime_type\n      size\n      status\n      folder\n      created_at\n      updated_at\n    }\n  }\n": typeof types.UploadFileDocument,
    "\n  query Uploads($id: UUID!, $tenant_id: UUID) {\n    upload(id: $id) {\n      id\n      status\n      file_url\n      updated_at\n    }\n    uploads(tenant_id: $tenant_id) {\n      id\n    }\n  }\n": typeof types.UploadsDocument,
    "\n  mutation UploadStatus($id: UUID!, $status: UploadStatus!) {\n    updateUploadStatus(id: $id, status: $status) {\n      id\n      status\n    }\n  }\n": typeof types.UploadStatusDocument,
    "\n  mutation DeleteUpload($id: UUID!) {\n    deleteUpload(id: $id) {\n      success\n    }\n  }\n": typeof types.DeleteUploadDocument,
    "\n  mutation CleanupUploads($hours: Int) {\n    cleanupUploads(hours: $hours) {\n      deleted_count\n    }\n  }\n": typeof types.CleanupUploadsDocument,
};
const documents: Documents = {
    "\n  fragment DealsPageInfo on PageInfo {\n    hasNextPage\n    hasPreviousPage\n    endCursor\n    startCursor\n  }\n": types.DealsPageInfoFragmentDoc,
    "\n  query DealsBoard($id: UUID!, $first: Int, $search: String) {\n    pipelineBoard(id: $id, search: $search) {\n      total_deals\n      total_amount\n      stages {\n        deal_count\n        total\n        stage {\n          id\n        }\n      }\n      pipeline {\n        id\n        stages {\n          id\n          name\n          deals(first: $first, search: $search) {\n            edges {\n              cursor\n              node {\n                id\n                number\n                total\n                lead_name\n                pending_todos\n                lead {\n                  id\n                  name\n                }\n                products {\n                  name\n                  total\n                }\n                tags {\n                  name\n                }\n              }\n            }\n            pageInfo {\n              ...DealsPageInfo\n            }\n          }\n        }\n      }\n    }\n  }\n": types.DealsBoardDocument,
    "\n  query DealsColumn($id: UUID!, $first: Int, $after: String, $last: Int, $before: String, $sort: DealSort) {\n    pipelineBoard(id: $id) {\n      pipeline {\n        stages {\n          id\n          deals(first: $first, after: $after, last: $last, before: $before, sort: $sort) {\n            edges {\n              node {\n                number\n              }\n            }\n            pageInfo {\n              ...DealsPageInfo\n            }\n          }\n        }\n      }\n    }\n  }\n": types.DealsColumnDocument,
    "\n  query DealsList($id: UUID!, $limit: Int, $page: Int, $sort: DealSort) {\n    pipelineDeals(id: $id, limit: $limit, page: $page, sort: $sort) {\n      data {\n        id\n        number\n        lead_name\n        products {\n          name\n        }\n        tags {\n          name\n        }\n        pending_todos\n        overdue_todos\n      }\n      pagination {\n        current_page\n        total_pages\n        total_count\n        has_next\n        has_prev\n      }\n    }\n  }\n": types.DealsListDocument,
    "\n  mutation DealsCreate($pipeline_id: UUID!, $stage_id: UUID!, $lead_id: UUID, $loss_reason: String, $products: [DealProductInput!]) {\n    createDeal(pipeline_id: $pipeline_id, stage_id: $stage_id, lead_id: $lead_id, loss_reason: $loss_reason, products: $products) {\n      id\n      number\n      total\n      loss_reason\n      lost_at\n      stage {\n        name\n        kind\n      }\n      owner {\n        id\n      }\n    }\n  }\n": types.DealsCreateDocument,
    "\n  mutation DealsMove($id: UUID!, $stage_id: UUID!, $loss_reason: String) {\n    moveDeal(id: $id, stage_id: $stage_id, loss_reason: $loss_reason) {\n      stage_id\n      won_at\n      lost_at\n      loss_reason\n    }\n  }\n": types.DealsMoveDocument,
    "\n  query DealsHistory($id: UUID!) {\n    dealHistory(id: $id) {\n      type\n      actor_name\n    }\n    dealActivities(id: $id) {\n      title\n    }\n    deal(id: $id) {\n      number\n      lead {\n        name\n        deals(first: 5) {\n          edges {\n            node {\n              number\n            }\n          }\n        }\n      }\n    }\n  }\n": types.DealsHistoryDocument,
    "\n  mutation DealsEdit($id: UUID!, $tag_id: UUID!, $value: Float, $owner_id: UUID) {\n    updateDeal(id: $id, value: $value, owner_id: $owner_id) {\n      value\n      total\n      owner {\n        name\n      }\n    }\n    addDealTag(id: $id, tag_id: $tag_id) {\n      success\n    }\n  }\n": types.DealsEditDocument,
    "\n  mutation DealsUntagDelete($id: UUID!, $tag_id: UUID!) {\n    removeDealTag(id: $id, tag_id: $tag_id) {\n      success\n    }\n    deleteDeal(id: $id) {\n      success\n    }\n  }\n": types.DealsUntagDeleteDocument,
    "\n  query BoardConfig {\n    pipelineGroups {\n      id\n      name\n      position\n      pipelines {\n        id\n        name\n        position\n        loss_reasons\n        group {\n          id\n        }\n        stages {\n          id\n          name\n          kind\n          position\n          color\n          pipeline {\n            id\n          }\n        }\n      }\n    }\n  }\n": types.BoardConfigDocument,
    "\n  mutation CreatePipelineGql($name: String!, $new_group_name: String) {\n    createPipeline(name: $name, new_group_name: $new_group_name) {\n      id\n      group {\n        name\n      }\n      stages {\n        name\n        kind\n      }\n    }\n  }\n": types.CreatePipelineGqlDocument,
    "\n  query ListingGql {\n    pipelines {\n      groups {\n        id\n        name\n      }\n      pipelines {\n        id\n        group_id\n        stages {\n          name\n        }\n      }\n    }\n  }\n": types.ListingGqlDocument,
    "\n  query ProductsGql {\n    products {\n      id\n      name\n      price\n    }\n  }\n": types.ProductsGqlDocument,
    "\n  mutation SavePipelineGql($id: UUID!, $name: String!, $stages: [ConfigStage!]!, $reallocation_targets: JSONObject) {\n    updatePipeline(id: $id, name: $name, stages: $stages, reallocation_targets: $reallocation_targets) {\n      id\n      name\n      stages {\n        id\n        name\n        position\n        kind\n      }\n    }\n  }\n": types.SavePipelineGqlDocument,
    "\n  mutation DeleteStageGql($id: UUID!, $target_stage_id: UUID) {\n    deleteStage(id: $id, target_stage_id: $target_stage_id) {\n      success\n    }\n  }\n": types.DeleteStageGqlDocument,
    "\n  mutation CreateLead($name: String!, $phone: String!, $tag_ids: [UUID!], $custom_fields: JSONObject) {\n    createLead(name: $name, phone: $phone, tag_ids: $tag_ids, custom_fields: $custom_fields) {\n      id name phone email company custom_fields created_at\n      status { id name color }\n      tags { id name color }\n    }\n  }\n": types.CreateLeadDocument,
    "\n  query LeadById($id: UUID!) {\n    lead(id: $id) { id name phone email company custom_fields created_at status { id name color } tags { id name color } }\n  }\n": types.LeadByIdDocument,
    "\n  mutation UploadFile($file: File!, $type: UploadFileType, $folder: String) {\n    uploadFile(file: $file, type: $type, folder: $folder) {\n      id\n      tenant_id\n      filename\n      file_type\n      file_url\n      mime_type\n      size\n      status\n      folder\n      created_at\n      updated_at\n    }\n  }\n": types.UploadFileDocument,
    "\n  query Uploads($id: UUID!, $tenant_id: UUID) {\n    upload(id: $id) {\n      id\n      status\n      file_url\n      updated_at\n    }\n    uploads(tenant_id: $tenant_id) {\n      id\n    }\n  }\n": types.UploadsDocument,
    "\n  mutation UploadStatus($id: UUID!, $status: UploadStatus!) {\n    updateUploadStatus(id: $id, status: $status) {\n      id\n      status\n    }\n  }\n": types.UploadStatusDocument,
    "\n  mutation DeleteUpload($id: UUID!) {\n    deleteUpload(id: $id) {\n      success\n    }\n  }\n": types.DeleteUploadDocument,
    "\n  mutation CleanupUploads($hours: Int) {\n    cleanupUploads(hours: $hours) {\n      deleted_count\n    }\n  }\n": types.CleanupUploadsDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment DealsPageInfo on PageInfo {\n    hasNextPage\n    hasPreviousPage\n    endCursor\n    startCursor\n  }\n"): (typeof documents)["\n  fragment DealsPageInfo on PageInfo {\n    hasNextPage\n    hasPreviousPage\n    endCursor\n    startCursor\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query DealsBoard($id: UUID!, $first: Int, $search: String) {\n    pipelineBoard(id: $id, search: $search) {\n      total_deals\n      total_amount\n      stages {\n        deal_count\n        total\n        stage {\n          id\n        }\n      }\n      pipeline {\n        id\n        stages {\n          id\n          name\n          deals(first: $first, search: $search) {\n            edges {\n              cursor\n              node {\n                id\n                number\n                total\n                lead_name\n                pending_todos\n                lead {\n                  id\n                  name\n                }\n                products {\n                  name\n                  total\n                }\n                tags {\n                  name\n                }\n              }\n            }\n            pageInfo {\n              ...DealsPageInfo\n            }\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query DealsBoard($id: UUID!, $first: Int, $search: String) {\n    pipelineBoard(id: $id, search: $search) {\n      total_deals\n      total_amount\n      stages {\n        deal_count\n        total\n        stage {\n          id\n        }\n      }\n      pipeline {\n        id\n        stages {\n          id\n          name\n          deals(first: $first, search: $search) {\n            edges {\n              cursor\n              node {\n                id\n                number\n                total\n                lead_name\n                pending_todos\n                lead {\n                  id\n                  name\n                }\n                products {\n                  name\n                  total\n                }\n                tags {\n                  name\n                }\n              }\n            }\n            pageInfo {\n              ...DealsPageInfo\n            }\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query DealsColumn($id: UUID!, $first: Int, $after: String, $last: Int, $before: String, $sort: DealSort) {\n    pipelineBoard(id: $id) {\n      pipeline {\n        stages {\n          id\n          deals(first: $first, after: $after, last: $last, before: $before, sort: $sort) {\n            edges {\n              node {\n                number\n              }\n            }\n            pageInfo {\n              ...DealsPageInfo\n            }\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query DealsColumn($id: UUID!, $first: Int, $after: String, $last: Int, $before: String, $sort: DealSort) {\n    pipelineBoard(id: $id) {\n      pipeline {\n        stages {\n          id\n          deals(first: $first, after: $after, last: $last, before: $before, sort: $sort) {\n            edges {\n              node {\n                number\n              }\n            }\n            pageInfo {\n              ...DealsPageInfo\n            }\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query DealsList($id: UUID!, $limit: Int, $page: Int, $sort: DealSort) {\n    pipelineDeals(id: $id, limit: $limit, page: $page, sort: $sort) {\n      data {\n        id\n        number\n        lead_name\n        products {\n          name\n        }\n        tags {\n          name\n        }\n        pending_todos\n        overdue_todos\n      }\n      pagination {\n        current_page\n        total_pages\n        total_count\n        has_next\n        has_prev\n      }\n    }\n  }\n"): (typeof documents)["\n  query DealsList($id: UUID!, $limit: Int, $page: Int, $sort: DealSort) {\n    pipelineDeals(id: $id, limit: $limit, page: $page, sort: $sort) {\n      data {\n        id\n        number\n        lead_name\n        products {\n          name\n        }\n        tags {\n          name\n        }\n        pending_todos\n        overdue_todos\n      }\n      pagination {\n        current_page\n        total_pages\n        total_count\n        has_next\n        has_prev\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DealsCreate($pipeline_id: UUID!, $stage_id: UUID!, $lead_id: UUID, $loss_reason: String, $products: [DealProductInput!]) {\n    createDeal(pipeline_id: $pipeline_id, stage_id: $stage_id, lead_id: $lead_id, loss_reason: $loss_reason, products: $products) {\n      id\n      number\n      total\n      loss_reason\n      lost_at\n      stage {\n        name\n        kind\n      }\n      owner {\n        id\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation DealsCreate($pipeline_id: UUID!, $stage_id: UUID!, $lead_id: UUID, $loss_reason: String, $products: [DealProductInput!]) {\n    createDeal(pipeline_id: $pipeline_id, stage_id: $stage_id, lead_id: $lead_id, loss_reason: $loss_reason, products: $products) {\n      id\n      number\n      total\n      loss_reason\n      lost_at\n      stage {\n        name\n        kind\n      }\n      owner {\n        id\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DealsMove($id: UUID!, $stage_id: UUID!, $loss_reason: String) {\n    moveDeal(id: $id, stage_id: $stage_id, loss_reason: $loss_reason) {\n      stage_id\n      won_at\n      lost_at\n      loss_reason\n    }\n  }\n"): (typeof documents)["\n  mutation DealsMove($id: UUID!, $stage_id: UUID!, $loss_reason: String) {\n    moveDeal(id: $id, stage_id: $stage_id, loss_reason: $loss_reason) {\n      stage_id\n      won_at\n      lost_at\n      loss_reason\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query DealsHistory($id: UUID!) {\n    dealHistory(id: $id) {\n      type\n      actor_name\n    }\n    dealActivities(id: $id) {\n      title\n    }\n    deal(id: $id) {\n      number\n      lead {\n        name\n        deals(first: 5) {\n          edges {\n            node {\n              number\n            }\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query DealsHistory($id: UUID!) {\n    dealHistory(id: $id) {\n      type\n      actor_name\n    }\n    dealActivities(id: $id) {\n      title\n    }\n    deal(id: $id) {\n      number\n      lead {\n        name\n        deals(first: 5) {\n          edges {\n            node {\n              number\n            }\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DealsEdit($id: UUID!, $tag_id: UUID!, $value: Float, $owner_id: UUID) {\n    updateDeal(id: $id, value: $value, owner_id: $owner_id) {\n      value\n      total\n      owner {\n        name\n      }\n    }\n    addDealTag(id: $id, tag_id: $tag_id) {\n      success\n    }\n  }\n"): (typeof documents)["\n  mutation DealsEdit($id: UUID!, $tag_id: UUID!, $value: Float, $owner_id: UUID) {\n    updateDeal(id: $id, value: $value, owner_id: $owner_id) {\n      value\n      total\n      owner {\n        name\n      }\n    }\n    addDealTag(id: $id, tag_id: $tag_id) {\n      success\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DealsUntagDelete($id: UUID!, $tag_id: UUID!) {\n    removeDealTag(id: $id, tag_id: $tag_id) {\n      success\n    }\n    deleteDeal(id: $id) {\n      success\n    }\n  }\n"): (typeof documents)["\n  mutation DealsUntagDelete($id: UUID!, $tag_id: UUID!) {\n    removeDealTag(id: $id, tag_id: $tag_id) {\n      success\n    }\n    deleteDeal(id: $id) {\n      success\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query BoardConfig {\n    pipelineGroups {\n      id\n      name\n      position\n      pipelines {\n        id\n        name\n        position\n        loss_reasons\n        group {\n          id\n        }\n        stages {\n          id\n          name\n          kind\n          position\n          color\n          pipeline {\n            id\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query BoardConfig {\n    pipelineGroups {\n      id\n      name\n      position\n      pipelines {\n        id\n        name\n        position\n        loss_reasons\n        group {\n          id\n        }\n        stages {\n          id\n          name\n          kind\n          position\n          color\n          pipeline {\n            id\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreatePipelineGql($name: String!, $new_group_name: String) {\n    createPipeline(name: $name, new_group_name: $new_group_name) {\n      id\n      group {\n        name\n      }\n      stages {\n        name\n        kind\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation CreatePipelineGql($name: String!, $new_group_name: String) {\n    createPipeline(name: $name, new_group_name: $new_group_name) {\n      id\n      group {\n        name\n      }\n      stages {\n        name\n        kind\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ListingGql {\n    pipelines {\n      groups {\n        id\n        name\n      }\n      pipelines {\n        id\n        group_id\n        stages {\n          name\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query ListingGql {\n    pipelines {\n      groups {\n        id\n        name\n      }\n      pipelines {\n        id\n        group_id\n        stages {\n          name\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ProductsGql {\n    products {\n      id\n      name\n      price\n    }\n  }\n"): (typeof documents)["\n  query ProductsGql {\n    products {\n      id\n      name\n      price\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SavePipelineGql($id: UUID!, $name: String!, $stages: [ConfigStage!]!, $reallocation_targets: JSONObject) {\n    updatePipeline(id: $id, name: $name, stages: $stages, reallocation_targets: $reallocation_targets) {\n      id\n      name\n      stages {\n        id\n        name\n        position\n        kind\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation SavePipelineGql($id: UUID!, $name: String!, $stages: [ConfigStage!]!, $reallocation_targets: JSONObject) {\n    updatePipeline(id: $id, name: $name, stages: $stages, reallocation_targets: $reallocation_targets) {\n      id\n      name\n      stages {\n        id\n        name\n        position\n        kind\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeleteStageGql($id: UUID!, $target_stage_id: UUID) {\n    deleteStage(id: $id, target_stage_id: $target_stage_id) {\n      success\n    }\n  }\n"): (typeof documents)["\n  mutation DeleteStageGql($id: UUID!, $target_stage_id: UUID) {\n    deleteStage(id: $id, target_stage_id: $target_stage_id) {\n      success\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateLead($name: String!, $phone: String!, $tag_ids: [UUID!], $custom_fields: JSONObject) {\n    createLead(name: $name, phone: $phone, tag_ids: $tag_ids, custom_fields: $custom_fields) {\n      id name phone email company custom_fields created_at\n      status { id name color }\n      tags { id name color }\n    }\n  }\n"): (typeof documents)["\n  mutation CreateLead($name: String!, $phone: String!, $tag_ids: [UUID!], $custom_fields: JSONObject) {\n    createLead(name: $name, phone: $phone, tag_ids: $tag_ids, custom_fields: $custom_fields) {\n      id name phone email company custom_fields created_at\n      status { id name color }\n      tags { id name color }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query LeadById($id: UUID!) {\n    lead(id: $id) { id name phone email company custom_fields created_at status { id name color } tags { id name color } }\n  }\n"): (typeof documents)["\n  query LeadById($id: UUID!) {\n    lead(id: $id) { id name phone email company custom_fields created_at status { id name color } tags { id name color } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UploadFile($file: File!, $type: UploadFileType, $folder: String) {\n    uploadFile(file: $file, type: $type, folder: $folder) {\n      id\n      tenant_id\n      filename\n      file_type\n      file_url\n      mime_type\n      size\n      status\n      folder\n      created_at\n      updated_at\n    }\n  }\n"): (typeof documents)["\n  mutation UploadFile($file: File!, $type: UploadFileType, $folder: String) {\n    uploadFile(file: $file, type: $type, folder: $folder) {\n      id\n      tenant_id\n      filename\n      file_type\n      file_url\n      mime_type\n      size\n      status\n      folder\n      created_at\n      updated_at\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Uploads($id: UUID!, $tenant_id: UUID) {\n    upload(id: $id) {\n      id\n      status\n      file_url\n      updated_at\n    }\n    uploads(tenant_id: $tenant_id) {\n      id\n    }\n  }\n"): (typeof documents)["\n  query Uploads($id: UUID!, $tenant_id: UUID) {\n    upload(id: $id) {\n      id\n      status\n      file_url\n      updated_at\n    }\n    uploads(tenant_id: $tenant_id) {\n      id\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UploadStatus($id: UUID!, $status: UploadStatus!) {\n    updateUploadStatus(id: $id, status: $status) {\n      id\n      status\n    }\n  }\n"): (typeof documents)["\n  mutation UploadStatus($id: UUID!, $status: UploadStatus!) {\n    updateUploadStatus(id: $id, status: $status) {\n      id\n      status\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeleteUpload($id: UUID!) {\n    deleteUpload(id: $id) {\n      success\n    }\n  }\n"): (typeof documents)["\n  mutation DeleteUpload($id: UUID!) {\n    deleteUpload(id: $id) {\n      success\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CleanupUploads($hours: Int) {\n    cleanupUploads(hours: $hours) {\n      deleted_count\n    }\n  }\n"): (typeof documents)["\n  mutation CleanupUploads($hours: Int) {\n    cleanupUploads(hours: $hours) {\n      deleted_count\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;